/** The spec's scope vocabulary for gateway keys. Empty or null permissions mean fully permissive. */
export const SCOPES = ["messages", "completions", "buffer"] as const
export type Scope = (typeof SCOPES)[number]

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  messages: "POST /api/v1/messages (Anthropic-format relay)",
  completions: "POST /api/v1/chat/completions and POST /api/v1/embeddings (OpenAI-compatible relay)",
  buffer: "Reserved for portal-side buffered-response reads; no route requires it yet"
}

export const isScope = (s: unknown): s is Scope => typeof s === "string" && (SCOPES as ReadonlyArray<string>).includes(s)

/** Portal token abilities: the documented abilities (docs/accounts.md) plus the webhook pair (docs/webhooks.md). */
export const ABILITIES = [
  "abilities:write",
  "ability:keys.read",
  "ability:keys.write",
  "ability:billing.read",
  "ability:billing.write",
  "ability:byok.write",
  "ability:admin",
  "webhooks.manage",
  "webhooks.read"
] as const
export type Ability = (typeof ABILITIES)[number]
export const isAbility = (s: unknown): s is Ability => typeof s === "string" && (ABILITIES as ReadonlyArray<string>).includes(s)
