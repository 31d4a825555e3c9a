/** A conversation as the app keeps it: every field here is sealed at rest except the receipts (receiptStore.ts). */

import type { Attachment } from "./attachments.ts"

export type MessageStatus = "streaming" | "done" | "stopped" | "error"

export interface ChatMessage {
  readonly id: string
  readonly role: "user" | "assistant"
  /** With the originals: what the user typed, or the answer as shown. */
  readonly content: string
  /** User messages: files read on this device, sent as their (tokenised) text. */
  readonly attachments?: ReadonlyArray<Attachment>
  /** User messages: this message as it left the device (aliases instead of personal data). */
  readonly tokenised?: string
  readonly status: MessageStatus
  /** Plain-words error, when status is "error". */
  readonly error?: string
  readonly model?: string
  readonly requestId?: string
}

export interface Conversation {
  readonly id: string
  readonly title: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly messages: ReadonlyArray<ChatMessage>
  /** Alias -> original for every call of this conversation; stays in this browser, sealed. */
  readonly aliases: ReadonlyArray<readonly [string, string]>
}

export const newConversation = (): Conversation => {
  const now = Date.now()
  return { id: crypto.randomUUID(), title: "New conversation", createdAt: now, updatedAt: now, messages: [], aliases: [] }
}

/** The first words of the first message. */
export const titleOf = (text: string): string => {
  const line = text.trim().replace(/\s+/g, " ")
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || "New conversation"
}
