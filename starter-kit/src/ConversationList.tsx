/** The sidebar: conversations stored in this browser, a new one, and "Clear all" (asked twice, then everything goes). */
import { useState } from "react"
import type { Conversation } from "./conversation.ts"

export const ConversationList = (props: {
  readonly conversations: ReadonlyArray<Conversation>
  readonly currentId: string | undefined
  readonly onOpen: (id: string | undefined) => void
  readonly onDelete: (id: string) => void
  readonly onClearAll: () => void
}) => {
  const [confirming, setConfirming] = useState(false)
  return (
    <nav className="sidebar" aria-label="Conversations">
      <button type="button" onClick={() => props.onOpen(undefined)}>
        New conversation
      </button>
      <ul>
        {props.conversations.map((c) => (
          <li key={c.id} className="conversation-item">
            <button type="button" className="open" aria-current={c.id === props.currentId ? "page" : undefined} onClick={() => props.onOpen(c.id)}>
              {c.title}
            </button>
            <button type="button" className="delete" aria-label={`Delete conversation: ${c.title}`} onClick={() => props.onDelete(c.id)}>
              ×
            </button>
          </li>
        ))}
      </ul>
      {confirming ? (
        <div className="confirm" role="group" aria-label="Confirm clear all">
          <p>Delete every conversation, alias map, receipt and key from this browser?</p>
          <button
            type="button"
            className="danger"
            onClick={() => {
              setConfirming(false)
              props.onClearAll()
            }}
          >
            Delete everything
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Clear all
        </button>
      )}
    </nav>
  )
}
