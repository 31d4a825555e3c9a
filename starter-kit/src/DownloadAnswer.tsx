/**
 * An answer as a file, rebuilt on this device by the SDK's reconstruct: a Word document, a workbook (from the
 * answer's tables), a web page or markdown, with the originals in it. Nothing is uploaded to make it.
 */
import { useState } from "react"
import type { Engine } from "./engine.ts"
import { plainWords } from "./plainErrors.ts"

const FORMATS = ["docx", "xlsx", "html", "md"] as const
type Format = (typeof FORMATS)[number]
const LABELS: Record<Format, string> = { docx: "Word (.docx)", xlsx: "Excel (.xlsx)", html: "Web page (.html)", md: "Markdown (.md)" }
const MEDIA: Record<Format, string> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  html: "text/html",
  md: "text/markdown"
}

export const DownloadAnswer = (props: {
  readonly text: string
  readonly aliases: ReadonlyMap<string, string>
  readonly engine: Engine | undefined
  /** The format of a file attached in the conversation, offered first. */
  readonly preferred: string | undefined
  readonly name: string
}) => {
  const initial = (FORMATS as ReadonlyArray<string>).includes(props.preferred ?? "") ? (props.preferred as Format) : "docx"
  const [format, setFormat] = useState<Format>(initial)
  const [problem, setProblem] = useState("")
  const download = async () => {
    if (props.engine === undefined) return
    setProblem("")
    try {
      const bytes = await props.engine.sdk.reconstruct(props.text, { format, filename: props.name, aliases: props.aliases })
      const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: MEDIA[format] }))
      const link = document.createElement("a")
      link.href = url
      link.download = `${props.name}.${format}`
      link.click()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
    } catch (error) {
      setProblem(plainWords(error))
    }
  }
  return (
    <div className="download">
      <label>
        Save the answer as{" "}
        <select value={format} onChange={(e) => setFormat(e.target.value as Format)}>
          {FORMATS.map((f) => (
            <option key={f} value={f}>
              {LABELS[f]}
            </option>
          ))}
        </select>
      </label>{" "}
      <button type="button" onClick={() => void download()} disabled={props.engine === undefined}>
        Download
      </button>
      {problem ? <p className="error" role="alert">{problem}</p> : null}
    </div>
  )
}
