import { Effect } from "effect"
import type { KeyEncryption } from "../../services/KeyEncryption.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { jsonColumn } from "../pg/jsonColumn.ts"

/**
 * How the OpenID provider's state is kept at rest (docs/accounts.md, "OpenID Connect"): oidc-provider's ids are the
 * bearer values themselves for opaque tokens (access and refresh tokens, authorization codes), interaction uids sit
 * in cookies and user codes are typed by people, so the database keeps only their SHA-256; payloads (token claims,
 * a client's secret, sessions) are sealed under the gateway's key-encryption key, bound to their model and stored id;
 * the provider's signing key and cookie secret are sealed too. A database dump alone yields no usable credential.
 */

/** The stored form of an id, uid or user code. */
export const storedId = (value: string): string => sha256HexSync(value)

/** What a sealed payload or key looks like in its jsonb column. */
export interface Sealed {
  readonly sealed: string
}

/** Rows written before sealing (plain JSON) are told apart from sealed ones by this. */
export const isSealed = (value: unknown): value is Sealed =>
  typeof value === "object" && value !== null && typeof (value as { sealed?: unknown }).sealed === "string" &&
  Object.keys(value).length === 1

/** What a sealed value is bound to: a provider row (model and stored id), or one of the provider's keys. */
export const payloadContext = (model: string, id: string) => `oidc-payload:${model}:${id}`
export const keyContext = (kid: string) => `oidc-key:${kid}`

export const sealJson = (keys: KeyEncryption["Service"], context: string, value: unknown): Effect.Effect<Sealed> =>
  Effect.map(keys.seal(JSON.stringify(value), context), (sealed) => ({ sealed }))

/** The value of a stored column (as the driver gave it); one from before sealing is returned as it is. */
export const openJson = <A>(keys: KeyEncryption["Service"], context: string, column: unknown): Effect.Effect<A> => {
  const stored = jsonColumn<unknown>(column)
  return isSealed(stored)
    ? Effect.map(keys.open(stored.sealed, context), (json) => JSON.parse(json) as A)
    : Effect.succeed(stored as A)
}
