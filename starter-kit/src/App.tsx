/**
 * The chat: conversations on the left, messages and the composer on the right. Every message is tokenised and attested
 * in this browser before it leaves (engine.ts); the streamed answer is detokenised chunk by chunk as it arrives; each
 * answer shows its signed receipt, verified here. Conversations live only in this browser's IndexedDB, sealed.
 */
import { type DragEvent, type FormEvent, type KeyboardEvent, useCallback, useEffect, useRef, useState } from "react"
import { AttachmentPicker } from "./AttachmentPicker.tsx"
import { ConversationList } from "./ConversationList.tsx"
import { type Attachment, callCharacters, MAX_CALL_CHARACTERS, messageContent, readAttachment, TooLongError } from "./attachments.ts"
import { type ChatMessage, type Conversation, newConversation, titleOf } from "./conversation.ts"
import { clearAll, deleteConversation, loadConversations, loadReceipts, saveConversation, saveReceipt } from "./conversationStore.ts"
import { createEngine, type Engine, type NameModelChoice } from "./engine.ts"
import { MessageView } from "./MessageView.tsx"
import { chatModels, type ModelEntry } from "./models.ts"
import { plainWords } from "./plainErrors.ts"
import { Settings } from "./Settings.tsx"

interface Busy {
  readonly conversationId: string
  readonly stop: () => void
}

type Receipts = ReadonlyMap<string, Record<string, unknown>>

const NAMES_SETTING = "privacy-relay-starter.names"

/** The text of a message content (a string, or OpenAI content parts). */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part: { type?: string; text?: string }) => (part.type === "text" ? part.text ?? "" : "")).join("\n")
    : ""

export const App = () => {
  const [conversations, setConversations] = useState<ReadonlyArray<Conversation>>([])
  const conversationsRef = useRef<ReadonlyArray<Conversation>>([])
  const [currentId, setCurrentId] = useState<string | undefined>(undefined)
  const [names, setNames] = useState<NameModelChoice>(() => (localStorage.getItem(NAMES_SETTING) === "off" ? "off" : "builtin"))
  const [engine, setEngine] = useState<Engine | undefined>(undefined)
  const [engineProblem, setEngineProblem] = useState<string | undefined>(undefined)
  const enginePromise = useRef<Promise<Engine> | undefined>(undefined)
  const [models, setModels] = useState<ReadonlyArray<ModelEntry>>([])
  const [model, setModel] = useState("")
  const modelList = useRef<Promise<unknown> | undefined>(undefined)
  const [receipts, setReceipts] = useState<Receipts>(new Map())
  const [busy, setBusy] = useState<Busy | undefined>(undefined)
  const [draft, setDraft] = useState("")
  const [attachments, setAttachments] = useState<ReadonlyArray<Attachment>>([])
  const [reading, setReading] = useState(false)
  const [attachProblem, setAttachProblem] = useState("")
  const [notice, setNotice] = useState("")

  const commit = (next: ReadonlyArray<Conversation>) => {
    conversationsRef.current = next
    setConversations(next)
  }
  const update = (id: string, change: (c: Conversation) => Conversation) =>
    commit(conversationsRef.current.map((c) => (c.id === id ? change(c) : c)))
  const updateMessage = (conversationId: string, messageId: string, change: (m: ChatMessage) => ChatMessage) =>
    update(conversationId, (c) => ({ ...c, messages: c.messages.map((m) => (m.id === messageId ? change(m) : m)) }))
  const persist = (id: string) => {
    const conversation = conversationsRef.current.find((c) => c.id === id)
    if (conversation !== undefined) void saveConversation(conversation).catch((error: Error) => setNotice(`Could not save the conversation: ${error.message}`))
  }

  // The engine loads after the first paint; the composer works at once (a message sent earlier waits for it).
  const startEngine = useCallback((choice: NameModelChoice) => {
    setEngine(undefined)
    setEngineProblem(undefined)
    const loading = createEngine(choice)
    enginePromise.current = loading
    loading.then(
      (ready) => enginePromise.current === loading && setEngine(ready),
      (error) => enginePromise.current === loading && setEngineProblem(plainWords(error))
    )
  }, [])
  useEffect(() => startEngine(names), [names, startEngine])

  // The model list needs no engine: fetched from this app's server at once, so the picker (and a message sent before
  // the engine is ready) has a model. Once the engine is there, its own call also warms the gateway identity probe.
  const showModels = useCallback((list: unknown) => {
    const usable = chatModels(list as { data?: ReadonlyArray<ModelEntry> })
    if (usable.length === 0) return
    setModels(usable)
    setModel((chosen) => chosen || usable[0]!.id)
  }, [])
  useEffect(() => {
    modelList.current = fetch("/api/v1/models", { headers: { accept: "application/json" } }).then((res) => (res.ok ? res.json() : undefined)).catch(() => undefined)
    void modelList.current.then(showModels)
  }, [showModels])
  useEffect(() => {
    if (engine === undefined) return
    engine.client.models.list().then(showModels, (error) => setNotice(`The model list could not be loaded: ${plainWords(error)}`))
  }, [engine, showModels])

  useEffect(() => {
    Promise.all([loadConversations(), loadReceipts()]).then(
      ([stored, storedReceipts]) => {
        commit(stored)
        setReceipts(new Map(storedReceipts.map((r) => [r.messageId, r.receipt])))
        setCurrentId((id) => id ?? stored[0]?.id)
      },
      (error: Error) => setNotice(`Stored conversations could not be opened: ${error.message}`)
    )
  }, [])

  const current = conversations.find((c) => c.id === currentId)
  const lastFile = current?.messages.flatMap((m) => m.attachments ?? []).at(-1)
  useEffect(() => void performance.mark("starter:first-render"), [])

  /** Asks the model about the conversation up to `userId`, streaming the answer into a new assistant message. */
  const answer = async (conversationId: string, userId: string) => {
    const assistantId = crypto.randomUUID()
    let chosenModel = model
    update(conversationId, (c) => ({
      ...c,
      updatedAt: Date.now(),
      messages: [...c.messages, { id: assistantId, role: "assistant", content: "", status: "streaming", model: chosenModel }]
    }))
    const controller = new AbortController()
    let stopped = false
    let abortStream = () => {}
    setBusy({
      conversationId,
      stop: () => {
        stopped = true
        controller.abort()
        abortStream()
      }
    })
    try {
      const ready = await enginePromise.current!
      // Sent before the model list had arrived: take its first chat model, as the picker will show.
      if (chosenModel === "") {
        chosenModel = chatModels(((await modelList.current) ?? (await ready.client.models.list())) as { data?: ReadonlyArray<ModelEntry> })[0]?.id ?? ""
        updateMessage(conversationId, assistantId, (m) => ({ ...m, model: chosenModel }))
      }
      const conversation = conversationsRef.current.find((c) => c.id === conversationId)!
      const upTo = conversation.messages.findIndex((m) => m.id === userId)
      const history = conversation.messages
        .slice(0, upTo + 1)
        .filter((m) => m.role === "user" || (m.status !== "error" && m.content !== ""))
        .map((m) => ({ role: m.role, content: m.role === "user" ? messageContent(m.content, m.attachments, ready.sdk.fileTextPart) : m.content }))
      const characters = callCharacters(history)
      if (characters > MAX_CALL_CHARACTERS) {
        throw new TooLongError(`This conversation is ${characters.toLocaleString("en")} characters long; one message may carry ${MAX_CALL_CHARACTERS.toLocaleString("en")}.`)
      }
      performance.mark("starter:send")
      const stream = await ready.client.chat.completions.create({ model: chosenModel, messages: history, stream: true }, { signal: controller.signal })
      abortStream = stream.abort
      if (stopped) stream.abort()
      const sent = (stream.tokenisedRequest as { messages: Array<{ content: unknown }> }).messages
      update(conversationId, (c) => ({
        ...c,
        aliases: [...c.aliases, ...stream.aliases],
        messages: c.messages.map((m) => (m.id === userId ? { ...m, tokenised: textOf(sent.at(-1)?.content) } : m))
      }))
      persist(conversationId)
      for await (const chunk of stream) {
        const delta = (chunk as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content
        if (delta) updateMessage(conversationId, assistantId, (m) => ({ ...m, content: m.content + delta }))
      }
      updateMessage(conversationId, assistantId, (m) => ({ ...m, status: "done", ...(stream.requestId ? { requestId: stream.requestId } : {}) }))
      const receipt = stream.receipt
      if (receipt !== undefined) {
        setReceipts((all) => new Map(all).set(assistantId, receipt))
        await saveReceipt({ messageId: assistantId, conversationId, receipt })
      }
    } catch (error) {
      updateMessage(conversationId, assistantId, (m) =>
        stopped ? { ...m, status: "stopped" } : { ...m, status: "error", error: plainWords(error) })
    } finally {
      setBusy(undefined)
      update(conversationId, (c) => ({ ...c, updatedAt: Date.now() }))
      persist(conversationId)
    }
  }

  const send = (event?: FormEvent) => {
    event?.preventDefault()
    const text = draft.trim()
    if (busy !== undefined || reading || (text === "" && attachments.length === 0)) return
    let conversation = conversationsRef.current.find((c) => c.id === currentId)
    if (conversation === undefined) {
      conversation = newConversation()
      commit([conversation, ...conversationsRef.current])
      setCurrentId(conversation.id)
    }
    const user: ChatMessage = { id: crypto.randomUUID(), role: "user", content: text, status: "done", ...(attachments.length > 0 ? { attachments } : {}) }
    update(conversation.id, (c) => ({ ...c, title: c.messages.length === 0 ? titleOf(text || attachments[0]!.filename) : c.title, messages: [...c.messages, user] }))
    setDraft("")
    setAttachments([])
    void answer(conversation.id, user.id)
  }

  const retry = (conversationId: string, assistantId: string) => {
    const conversation = conversationsRef.current.find((c) => c.id === conversationId)
    if (conversation === undefined || busy !== undefined) return
    const index = conversation.messages.findIndex((m) => m.id === assistantId)
    const user = conversation.messages.slice(0, index).findLast((m) => m.role === "user")
    if (user === undefined) return
    update(conversationId, (c) => ({ ...c, messages: c.messages.filter((m) => m.id !== assistantId) }))
    void answer(conversationId, user.id)
  }

  const addFiles = async (files: ReadonlyArray<File>) => {
    if (files.length === 0) return
    setReading(true)
    setAttachProblem("")
    for (const file of files) {
      try {
        const read = await readAttachment(file)
        setAttachments((all) => [...all, read])
      } catch (error) {
        setAttachProblem(`${file.name}: ${plainWords(error)}`)
      }
    }
    setReading(false)
  }

  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    event.preventDefault()
    void addFiles([...event.dataTransfer.files])
  }

  const onComposerKey = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) send(event)
  }

  const removeConversation = async (id: string) => {
    await deleteConversation(id)
    commit(conversationsRef.current.filter((c) => c.id !== id))
    if (currentId === id) setCurrentId(conversationsRef.current[0]?.id)
  }

  const wipe = async () => {
    busy?.stop()
    await clearAll()
    commit([])
    setReceipts(new Map())
    setCurrentId(undefined)
    setNotice("Everything was deleted from this browser: conversations, alias maps, receipts and keys.")
    startEngine(names)
  }

  const chooseNames = (on: boolean) => {
    const choice = on ? "builtin" : "off"
    localStorage.setItem(NAMES_SETTING, choice)
    setNames(choice)
  }

  const engineStatus = engineProblem ?? (engine === undefined ? "Loading the on-device engine…" : `On-device engine ready (names ${names === "off" ? "off" : "on"}).`)

  return (
    <div className="app">
      <header className="top">
        <h1>Private chat</h1>
        <p className="engine-status" role="status" data-ready={engine !== undefined}>
          {engineStatus}
        </p>
      </header>
      <ConversationList
        conversations={conversations}
        currentId={currentId}
        onOpen={setCurrentId}
        onDelete={(id) => void removeConversation(id)}
        onClearAll={() => void wipe()}
      />
      <main className="chat">
        <Settings models={models} model={model} onModel={setModel} names={names} onNames={chooseNames} />
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <ol className="messages" aria-label="Messages">
          {(current?.messages ?? []).map((m, i, all) => (
            <MessageView
              key={m.id}
              message={m}
              aliases={current!.aliases}
              engine={engine}
              models={models}
              receipt={receipts.get(m.id)}
              canRetry={busy === undefined && i === all.length - 1}
              fileFormat={lastFile?.format}
              fileName={lastFile?.filename.replace(/\.[^.]*$/, "")}
              onRetry={() => retry(current!.id, m.id)}
            />
          ))}
        </ol>
        <form className="composer" onSubmit={send} onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
          <label htmlFor="composer">Message</label>
          <textarea
            id="composer"
            value={draft}
            rows={3}
            placeholder="Write a message, or drop a file here. Enter sends, Shift+Enter adds a line."
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onComposerKey}
          />
          <AttachmentPicker attachments={attachments} reading={reading} onFiles={(files) => void addFiles(files)} onRemove={(i) => setAttachments((all) => all.filter((_, j) => j !== i))} />
          {attachProblem ? (
            <p className="error" role="alert">
              {attachProblem}
            </p>
          ) : null}
          <div className="actions">
            <button type="submit" disabled={busy !== undefined || reading || (draft.trim() === "" && attachments.length === 0)}>
              Send
            </button>
            {busy !== undefined ? (
              <button type="button" className="stop" onClick={busy.stop}>
                Stop
              </button>
            ) : null}
          </div>
        </form>
      </main>
    </div>
  )
}
