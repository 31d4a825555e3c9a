/** Attach files to the next message: a button (keyboard-friendly) or a drop on the composer; each shown as a chip. */
import { useRef } from "react"
import { ACCEPTED, type Attachment } from "./attachments.ts"

export const AttachmentPicker = (props: {
  readonly attachments: ReadonlyArray<Attachment>
  readonly reading: boolean
  readonly onFiles: (files: ReadonlyArray<File>) => void
  readonly onRemove: (index: number) => void
}) => {
  const input = useRef<HTMLInputElement>(null)
  return (
    <div className="attachments">
      <button type="button" onClick={() => input.current?.click()} disabled={props.reading}>
        {props.reading ? "Reading the file…" : "Attach a file"}
      </button>
      <input
        ref={input}
        type="file"
        accept={ACCEPTED}
        multiple
        hidden
        aria-label="Attach files"
        data-testid="file-input"
        onChange={(e) => {
          props.onFiles([...(e.target.files ?? [])])
          e.target.value = ""
        }}
      />
      {props.attachments.map((a, i) => (
        <span key={`${a.filename}-${i}`} className="chip" data-testid="attachment">
          {a.filename} ({a.format}, {a.text.length.toLocaleString("en")} characters, read on this device)
          <button type="button" className="chip-remove" aria-label={`Remove ${a.filename}`} onClick={() => props.onRemove(i)}>
            ×
          </button>
        </span>
      ))}
    </div>
  )
}
