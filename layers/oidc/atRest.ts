import { Effect } from "effect"
import type { KeyEncryption } from "../../services/KeyEncryption.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"

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

const payloadContext = (model: string, id: string) => `oidc-payload:${model}:${id}`
const keyContext = (kid: string) => `oidc-key:${kid}`

export const sealPayload = (keys: KeyEncryption["Service"], model: string, id: string, payload: unknown): Effect.Effect<Sealed> =>
  Effect.map(keys.seal(JSON.stringify(payload), payloadContext(model, id)), (sealed) => ({ sealed }))

/** The payload of a stored row; a row from before sealing is returned as it is. */
export const openPayload = <A>(keys: KeyEncryption["Service"], model: string, id: string, stored: unknown): Effect.Effect<A> =>
  isSealed(stored)
    ? Effect.map(keys.open(stored.sealed, payloadContext(model, id)), (json) => JSON.parse(json) as A)
    : Effect.succeed(stored as A)

export const sealKey = (keys: KeyEncryption["Service"], kid: string, jwk: unknown): Effect.Effect<Sealed> =>
  Effect.map(keys.seal(JSON.stringify(jwk), keyContext(kid)), (sealed) => ({ sealed }))

export const openKey = <A>(keys: KeyEncryption["Service"], kid: string, stored: unknown): Effect.Effect<A> =>
  isSealed(stored)
    ? Effect.map(keys.open(stored.sealed, keyContext(kid)), (json) => JSON.parse(json) as A)
    : Effect.succeed(stored as A)
