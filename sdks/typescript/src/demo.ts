/**
 * The anonymous demo (`privacy-relay demo`, `npm run demo` in the repository): a terminal chat through the relay with
 * a demo key, showing for every turn what left this device (the tokenised text) and the answer, streamed, with the
 * originals restored here. The demo key is asked for anonymously (`POST /api/v1/demo/key`), held in memory only and
 * never printed whole; the conversation history stays on this device and is tokenised again for every turn.
 */
import { createInterface } from "node:readline"
import { gatewayUrlSetting, nameModelOption, nameModelSetting } from "./client/clientSettings.ts"
import { AuthenticationError, ConfigurationError, ConnectionError, InsufficientBalanceError, RateLimitError, RelayError } from "./errors.ts"
import type { RelayClient } from "./index.ts"
import { ConfigInvalid, readSettings } from "./wire/config/setting.ts"

export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:8080"

/** The demo's settings (docs/configuration.md), read whole before anything is asked of the gateway. */
export const DEMO_SETTINGS = {
  gatewayUrl: gatewayUrlSetting(DEFAULT_GATEWAY_URL),
  nameModel: nameModelSetting
}

export const DEMO_HELP = `privacy-relay demo [--model <id>]

Chat with a Privacy Relay gateway from this terminal with an anonymous demo key ($2 of credit, 24 hours,
no account, no receipts; at most 2 keys per network per day). Personal data in what you type (e-mail
addresses, phone numbers, card numbers, names, ...) is replaced by aliases on this device before anything
is sent; each turn shows what left the device, then the answer with your originals put back.

  --model <id>   the model to chat with (default: the first chat model the gateway offers)
  --help         this text

Type a message and press Enter. /quit or end of input (Ctrl-D) ends the chat.

Environment:
  GATEWAY_URL    the gateway (default ${DEFAULT_GATEWAY_URL}); https, or http to a loopback address
  NAME_MODEL     builtin (default), compromise, off, or the http(s) URL of a name model service
`

export interface DemoIo {
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream & { readonly isTTY?: boolean }
  /** Where failures go (a separate stream, so the chat transcript stays clean). */
  readonly errors: NodeJS.WritableStream
}

type Message = { readonly role: "user" | "assistant"; readonly content: string }

/** Exit codes: 0 done, 1 the gateway refused or failed, 2 bad usage or settings. */
export const runDemo = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>, io: DemoIo): Promise<number> => {
  const say = (text: string) => io.output.write(text)
  const fail = (text: string, code: number) => {
    io.errors.write(`privacy-relay demo: ${text}\n`)
    return code
  }

  let model: string | undefined
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--help" || args[i] === "-h") return (say(DEMO_HELP), 0)
    if (args[i] === "--model" && args[i + 1] !== undefined && args[i + 1] !== "") model = args[++i]
    else return fail(`unknown argument ${JSON.stringify(args[i])}.\n\n${DEMO_HELP}`, 2)
  }
  let gatewayUrl: string
  let nameModel: string
  try {
    const settings = readSettings(DEMO_SETTINGS, env)
    gatewayUrl = settings.gatewayUrl ?? DEFAULT_GATEWAY_URL
    nameModel = nameModelOption(settings.nameModel)
  } catch (error) {
    if (error instanceof ConfigInvalid) return fail(error.message, 2)
    throw error
  }

  let relay: RelayClient
  let expiresAt: string
  try {
    // Loaded once the arguments are known to be good: --help and usage errors answer without loading the engine.
    const { RelayClient } = await import("./index.ts")
    // No key yet: the demo key route takes none.
    const issued = await new RelayClient({ gatewayUrl, nameModel }).rest.demoKey()
    relay = new RelayClient({ gatewayUrl, apiKey: issued.api_key, nameModel })
    expiresAt = issued.expires_at
    say(`Demo key ${issued.key_prefix}...: $${issued.balance_usd} of credit, valid until ${expiresAt}. Demo calls get no receipts.\n`)
    model ??= await firstChatModel(relay)
  } catch (error) {
    return fail(startFailure(error, gatewayUrl), error instanceof ConfigurationError ? 2 : 1)
  }
  if (model === undefined) return fail(`the gateway at ${gatewayUrl} offers no chat model to a demo key.`, 1)
  say(`Model ${model} via ${gatewayUrl}. Type a message; /quit or Ctrl-D ends.\n`)

  const history: Array<Message> = []
  const lines = lineReader(io)
  let current: { abort: () => void } | undefined
  lines.onInterrupt(() => (current === undefined ? lines.close() : current.abort()))
  try {
    for (;;) {
      const line = await lines.next("\nyou> ")
      if (line === undefined || line.trim() === "/quit") break
      if (line.trim() === "") continue
      const turn: Array<Message> = [...history, { role: "user", content: line }]
      try {
        const stream = await relay.chat.completions.create({ model, stream: true, messages: turn })
        current = stream
        say(`left this device> ${lastUserText(stream.tokenisedRequest)}\n`)
        if (history.length > 0) say(`                  (with the ${history.length} earlier messages of this chat, tokenised the same way)\n`)
        say("answer> ")
        let answer = ""
        for await (const chunk of stream) {
          const piece: string = chunk.choices?.[0]?.delta?.content ?? ""
          answer += piece
          say(piece)
        }
        say("\n")
        history.push({ role: "user", content: line }, { role: "assistant", content: answer })
      } catch (error) {
        const verdict = turnFailure(error)
        io.errors.write(`${verdict.message}\n`)
        if (verdict.fatal) return 1
      } finally {
        current = undefined
      }
    }
  } finally {
    lines.close()
  }
  say("\nBye.\n")
  return 0
}

const firstChatModel = async (relay: RelayClient): Promise<string | undefined> => {
  const { data } = await relay.models.list()
  return (data as Array<{ id: string; capabilities?: Array<string> }>).find((m) => m.capabilities?.includes("chat"))?.id
}

/** The text of the last user message of a tokenised chat body: what this turn added to what left the device. */
const lastUserText = (tokenised: unknown): string => {
  const messages = (tokenised as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []
  const content = messages.filter((m) => m.role === "user").at(-1)?.content
  if (typeof content === "string") return content
  return JSON.stringify(content)
}

const startFailure = (error: unknown, gatewayUrl: string): string => {
  if (error instanceof RateLimitError) {
    const wait = error.retryAfterSeconds === undefined ? "" : ` Try again in ${formatDuration(error.retryAfterSeconds)}.`
    return `no demo key: the gateway gives at most 2 demo keys per network per day (429 ${error.code}).${wait} For more, get a free-tier key: POST /api/v1/self-service/key.`
  }
  if (error instanceof ConnectionError) return `cannot reach the gateway at ${gatewayUrl} (${(error.cause as Error | undefined)?.message ?? error.message}). Is it running (npm start), and is GATEWAY_URL right?`
  if (error instanceof RelayError) return `${error.message.replaceAll("gatewayUrl", "GATEWAY_URL")} (${error.code}${error.status === 0 ? "" : `, HTTP ${error.status}`})`
  return `failed: ${(error as Error).message}`
}

/** What to tell the user when a turn fails, and whether the chat can go on. Nothing of the turn was kept. */
const turnFailure = (error: unknown): { readonly message: string; readonly fatal: boolean } => {
  if (error instanceof InsufficientBalanceError) {
    return {
      fatal: true,
      message:
        "The demo key's $2.00 of credit is spent: $0.00 remains (402 insufficient_balance); nothing was sent to the model. " +
        "Run the demo again tomorrow for a new key, or get a free-tier key: POST /api/v1/self-service/key."
    }
  }
  if (error instanceof AuthenticationError && error.code === "key_expired") {
    return { fatal: true, message: "The demo key has expired (demo keys last 24 hours; 401 key_expired). Run the demo again for a new key." }
  }
  if (error instanceof AuthenticationError) return { fatal: true, message: `The gateway refused the demo key (401 ${error.code}): ${error.message}` }
  if (error instanceof RateLimitError) {
    const wait = error.retryAfterSeconds === undefined ? "a moment" : formatDuration(error.retryAfterSeconds)
    return { fatal: false, message: `Slow down: demo keys may make 10 calls a minute (429 ${error.code}). Try again in ${wait}; that message was not sent.` }
  }
  if (error instanceof RelayError) {
    return { fatal: false, message: `That turn failed (${error.code}${error.status === 0 ? "" : `, HTTP ${error.status}`}): ${error.message}` }
  }
  return { fatal: true, message: `Unexpected failure: ${(error as Error).message}` }
}

const formatDuration = (seconds: number): string => {
  if (seconds < 90) return `${Math.ceil(seconds)} s`
  if (seconds < 5400) return `${Math.ceil(seconds / 60)} min`
  return `${Math.ceil(seconds / 3600)} h`
}

/**
 * Lines from the input, one at a time, with a prompt. Lines typed (or piped) while a turn runs wait their turn; end
 * of input ends the chat only once the lines before it have been answered.
 */
const lineReader = (io: DemoIo) => {
  // In a terminal, readline shows the prompt and echoes what is typed; piped input is echoed after the prompt here,
  // so the transcript reads the same.
  const terminal = io.output.isTTY === true && (io.input as { isTTY?: boolean }).isTTY === true
  const rl = createInterface({ input: io.input, output: io.output, terminal })
  const queued: Array<string> = []
  let ended = false
  let waiting: ((line: string | undefined) => void) | undefined
  rl.on("line", (line) => {
    if (waiting !== undefined) {
      const resolve = waiting
      waiting = undefined
      resolve(line)
    } else queued.push(line)
  })
  rl.on("close", () => {
    ended = true
    waiting?.(undefined)
    waiting = undefined
  })
  return {
    next: async (prompt: string): Promise<string | undefined> => {
      if (terminal && queued.length === 0 && !ended) {
        rl.setPrompt(prompt)
        rl.prompt()
      }
      const line = queued.length > 0 ? queued.shift() : ended ? undefined : await new Promise<string | undefined>((resolve) => (waiting = resolve))
      if (!terminal && line !== undefined) io.output.write(`${prompt}${line}\n`)
      return line
    },
    /** Ctrl-C in a terminal. */
    onInterrupt: (handler: () => void) => void rl.on("SIGINT", handler),
    close: () => rl.close()
  }
}
