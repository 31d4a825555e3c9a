// Names of wire formats in receipts (`extensions.translation` of a v2 receipt, `translation` of a v3
// countersignature). `from` is always a client format: the relay route the client called speaks it. `to` is the
// format the gateway sent upstream: the other client format, or a provider's own format the gateway only speaks
// upstream ("gemini" for Google's generateContent, ...). Verifiers accept any well-formed name for `to`, so a gateway
// that learns a new provider format does not make older verifiers reject its receipts.

/**
 * The formats of the gateway's conversation routes: `/chat/completions` (openai), `/messages` (anthropic) and
 * `/responses` (openai-responses).
 */
export type ClientWireFormat = "openai" | "anthropic" | "openai-responses"

export const CLIENT_WIRE_FORMATS: ReadonlyArray<ClientWireFormat> = ["openai", "anthropic", "openai-responses"]

/** A wire-format name: 1-32 characters, lowercase letters, digits and hyphens, starting with a letter. */
export type WireFormatName = string

const WIRE_FORMAT_NAME = /^[a-z][a-z0-9-]{0,31}$/

export const isClientWireFormat = (value: unknown): value is ClientWireFormat => CLIENT_WIRE_FORMATS.includes(value as ClientWireFormat)

export const isWireFormatName = (value: unknown): value is WireFormatName => typeof value === "string" && WIRE_FORMAT_NAME.test(value)
