/** One message: its text (the answer grows as it streams), what left the device, errors in plain words, the receipt. */
import { useMemo } from "react"
import type { ChatMessage } from "./conversation.ts"
import { DownloadAnswer } from "./DownloadAnswer.tsx"
import type { Engine } from "./engine.ts"
import type { ModelEntry } from "./models.ts"
import { ReceiptWidget } from "./ReceiptWidget.tsx"
import { WhatLeft } from "./WhatLeft.tsx"

export const MessageView = (props: {
  readonly message: ChatMessage
  readonly aliases: ReadonlyArray<readonly [string, string]>
  readonly engine: Engine | undefined
  readonly models: ReadonlyArray<ModelEntry>
  readonly receipt: Record<string, unknown> | undefined
  readonly canRetry: boolean
  readonly onRetry: () => void
  /** The last file attached in the conversation: its format is offered first for the download. */
  readonly fileFormat: string | undefined
  readonly fileName: string | undefined
}) => {
  const { message } = props
  const aliasMap = useMemo(() => new Map(props.aliases), [props.aliases])
  const mine = message.role === "user"
  return (
    <li className={`message ${message.role}`} data-status={message.status} aria-busy={message.status === "streaming"}>
      <p className="who">{mine ? "You" : `Assistant${message.model ? ` · ${message.model}` : ""}`}</p>
      <div className="content">{message.content || (message.status === "streaming" ? "…" : "")}</div>
      {message.attachments?.map((a, i) => (
        <p key={i} className="chip" data-testid="sent-attachment">
          {a.filename} ({a.format}, read on this device; its text was tokenised with the message)
        </p>
      ))}
      {mine && message.tokenised !== undefined ? <WhatLeft tokenised={message.tokenised} aliasPattern={props.engine?.sdk.ALIAS_PATTERN} aliases={aliasMap} /> : null}
      {message.status === "error" ? (
        <p className="error" role="alert">
          {message.error}
        </p>
      ) : null}
      {message.status === "stopped" ? <p className="note">Stopped: the answer above is incomplete.</p> : null}
      {!mine && (message.status === "error" || message.status === "stopped") && props.canRetry ? (
        <button type="button" onClick={props.onRetry}>
          Retry
        </button>
      ) : null}
      {!mine && message.status === "done" && message.content !== "" ? (
        <DownloadAnswer text={message.content} aliases={aliasMap} engine={props.engine} preferred={props.fileFormat} name={`${props.fileName ?? "answer"}-answer`} />
      ) : null}
      {!mine && props.receipt !== undefined ? <ReceiptWidget receipt={props.receipt} engine={props.engine} models={props.models} /> : null}
    </li>
  )
}
