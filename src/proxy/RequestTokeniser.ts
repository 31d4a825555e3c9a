/**
 * How the local proxy tokenises one request body: in a worker thread (workerTokeniser.ts, what the proxy
 * runs) or on the calling thread (inProcessTokeniser, for tests with stand-in name models). Either way the
 * result is the tokenised bytes, the alias map and the counts, or one of the errors below; nothing is kept
 * between requests.
 */
import type { TokenisedBody } from "../../sdks/typescript/src/engine.ts"
import type { AttestationRoute } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { tokeniseRequest, type AliasMap, type NameModel, type TokeniseRequestOptions } from "../../sdks/typescript/src/tokeniser/index.ts"

export type { TokenisedBody }

export interface RequestTokeniser {
  /**
   * Rejects with the signal's reason once it is aborted (the caller stops waiting at once). `callSecret` keys this
   * request's aliases (a request with an Idempotency-Key: the same bytes on a retry); fresh random when absent.
   */
  readonly tokenise: (route: AttestationRoute, body: unknown, signal: AbortSignal, callSecret?: Uint8Array) => Promise<TokenisedBody>
  readonly close: () => Promise<void>
}

/**
 * The engine options for one request: stable aliases (from the device-held secret) on the embeddings route
 * only, so the same input gives the same embedding; per-request aliases everywhere else.
 */
export const requestOptions = (
  route: AttestationRoute,
  names: NameModel | "off",
  stableAliasSecret: Uint8Array | undefined,
  signal: AbortSignal,
  callSecret?: Uint8Array
): TokeniseRequestOptions => ({
  names,
  signal,
  ...(route === "embeddings" && stableAliasSecret !== undefined ? { stableAliasSecret } : {}),
  ...(callSecret === undefined ? {} : { secret: callSecret })
})

export const inProcessTokeniser = (names: NameModel | "off", stableAliasSecret?: Uint8Array): RequestTokeniser => ({
  tokenise: (route, body, signal, callSecret) => tokeniseRequest(route, body, requestOptions(route, names, stableAliasSecret, signal, callSecret)),
  close: async () => undefined
})
