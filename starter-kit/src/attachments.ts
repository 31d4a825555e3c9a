/**
 * Attachments are read on this device by the SDK's readFile (.docx .xlsx .pptx .pdf .csv .txt .md .html): only their
 * text goes into the message, as a text part naming the file, and is tokenised with it. The file itself never leaves.
 */
import { loadSdk } from "./engine.ts"

export interface Attachment {
  readonly filename: string
  readonly format: string
  /** The file's text (markdown), with the originals: sealed at rest, tokenised before it is sent. */
  readonly text: string
}

export const ACCEPTED = ".docx,.xlsx,.pptx,.pdf,.csv,.txt,.md,.markdown,.html,.htm"

export const readAttachment = async (file: File): Promise<Attachment> => {
  const sdk = await loadSdk()
  const read = await sdk.readFile(new Uint8Array(await file.arrayBuffer()), { filename: file.name, ...(file.type ? { mediaType: file.type } : {}) })
  return { filename: read.filename, format: read.format, text: read.text }
}

/** The message content sent for a user message: its text, then one text part per attached file. */
export const messageContent = (
  text: string,
  attachments: ReadonlyArray<Attachment> | undefined,
  fileTextPart: (name: string, text: string) => { type: "text"; text: string }
): string | Array<{ type: "text"; text: string }> =>
  attachments === undefined || attachments.length === 0 ? text : [{ type: "text", text }, ...attachments.map((a) => fileTextPart(a.filename, a.text))]
