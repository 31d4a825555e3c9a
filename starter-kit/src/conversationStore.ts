/**
 * Conversations in IndexedDB, each sealed whole (title, messages, alias map) under the non-extractable sealing key;
 * receipts beside them in clear (they hold no content: model, tokens, hashes, the gateway's signature), so they can be
 * re-verified without unsealing anything. Nothing is stored anywhere else.
 */
import type { Conversation } from "./conversation.ts"
import { deleteDatabase, getAll, put, remove, STORES } from "./idb.ts"
import { type Sealed, seal, unseal } from "./sealed.ts"

interface StoredConversation {
  readonly id: string
  readonly updatedAt: number
  readonly sealed: Sealed
}

export interface StoredReceipt {
  readonly messageId: string
  readonly conversationId: string
  readonly receipt: Record<string, unknown>
}

export const saveConversation = async (conversation: Conversation): Promise<void> => {
  const record: StoredConversation = { id: conversation.id, updatedAt: conversation.updatedAt, sealed: await seal(conversation) }
  await put(STORES.conversations, record)
}

/** Newest first. A record that cannot be unsealed (its key was wiped) is skipped. */
export const loadConversations = async (): Promise<Array<Conversation>> => {
  const records = await getAll<StoredConversation>(STORES.conversations)
  const opened = await Promise.all(records.map((r) => unseal<Conversation>(r.sealed).catch(() => undefined)))
  return opened.filter((c): c is Conversation => c !== undefined).sort((a, b) => b.updatedAt - a.updatedAt)
}

export const deleteConversation = async (id: string): Promise<void> => {
  await remove(STORES.conversations, id)
  for (const r of await loadReceipts()) if (r.conversationId === id) await remove(STORES.receipts, r.messageId)
}

export const saveReceipt = (record: StoredReceipt): Promise<void> => put(STORES.receipts, record)

export const loadReceipts = (): Promise<Array<StoredReceipt>> => getAll<StoredReceipt>(STORES.receipts)

/** "Clear all": conversations, alias maps, receipts and both keys. */
export const clearAll = (): Promise<void> => deleteDatabase()
