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

/**
 * Most characters one call may carry (the conversation so far, files included). The engine tokenises on the page's
 * main thread at roughly 1 to 2 s per 100,000 characters with names on, so a bigger call would freeze the page;
 * past this the user is asked to shorten it or start a new conversation.
 */
export const MAX_CALL_CHARACTERS = 200_000

export class TooLongError extends Error {
  readonly code = "too_long"
}

export const ACCEPTED = ".docx,.xlsx,.pptx,.pdf,.csv,.txt,.md,.markdown,.html,.htm"

export const readAttachment = async (file: File): Promise<Attachment> => {
  const sdk = await loadSdk()
  const read = await sdk.readFile(new Uint8Array(await file.arrayBuffer()), { filename: file.name, ...(file.type ? { mediaType: file.type } : {}) })
  if (read.text.length > MAX_CALL_CHARACTERS) {
    throw new TooLongError(`Its text is ${read.text.length.toLocaleString("en")} characters; a message may carry ${MAX_CALL_CHARACTERS.toLocaleString("en")}.`)
  }
  return { filename: read.filename, format: read.format, text: read.text }
}

/** The message content sent for a user message: its text, then one text part per attached file. */
export const messageContent = (
  text: string,
  attachments: ReadonlyArray<Attachment> | undefined,
  fileTextPart: (name: string, text: string) => { type: "text"; text: string }
): string | Array<{ type: "text"; text: string }> =>
  attachments === undefined || attachments.length === 0 ? text : [{ type: "text", text }, ...attachments.map((a) => fileTextPart(a.filename, a.text))]

/** Characters of a call's messages (text parts included). */
export const callCharacters = (messages: ReadonlyArray<{ readonly content: string | ReadonlyArray<{ readonly text: string }> }>): number =>
  messages.reduce((n, m) => n + (typeof m.content === "string" ? m.content.length : m.content.reduce((k, part) => k + part.text.length, 0)), 0)
