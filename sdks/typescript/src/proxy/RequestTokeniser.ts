/**
 * How the local proxy tokenises one request body: in a worker thread (workerTokeniser.ts, what the proxy
 * runs) or on the calling thread (inProcessTokeniser, for tests with stand-in name models). Either way the
 * result is the tokenised bytes, the alias map and the counts, or one of the errors below; nothing is kept
 * between requests.
 */
import type { TokenisedBody } from "../engine.ts"
import type { AttestationRoute } from "../wire/attestation/v3.ts"
import { tokeniseRequest, type AliasMap, type ImageRedactor, type MediaPolicy, type NameModel, type TokeniseRequestOptions } from "../tokeniser/index.ts"

import { nodeHmacSha256 } from "../client/nodeAliasMac.ts"
import { createImageRedactor, type NodeImageRedactor } from "../ocr/redactImage.ts"

export type { TokenisedBody }

export interface RequestTokeniser {
  /**
   * Rejects with the signal's reason once it is aborted (the caller stops waiting at once). `callSecret` keys this
   * request's aliases (a request with an Idempotency-Key: the same bytes on a retry); fresh random when absent.
   * `body` is handed over: it may be rewritten in place (the proxy parsed it for this call and does not read it again).
   */
  readonly tokenise: (route: AttestationRoute, body: unknown, signal: AbortSignal, callSecret?: Uint8Array) => Promise<TokenisedBody>
  readonly close: () => Promise<void>
}

/** The proxy's tokeniser settings besides the name model (plain data: they are handed to worker threads). */
export interface TokeniserSettings {
  /** The device-held secret of stable aliases (embeddings route only); absent: per-request aliases. */
  readonly stableAliasSecret?: Uint8Array | undefined
  /** The device-held secret end-user identifiers are aliased under (`USER_<tag>`, stable across requests). */
  readonly identifierSecret?: Uint8Array | undefined
  /** MEDIA_POLICY and PASSTHROUGH_PATHS (the egress policy's opt-ins). */
  readonly mediaPolicy?: MediaPolicy | undefined
  readonly passthroughPaths?: ReadonlyArray<string> | undefined
}

/**
 * The engine options for one request: stable aliases (from the device-held secret) on the embeddings route
 * only, so the same input gives the same embedding; per-request aliases everywhere else; the egress opt-ins, with
 * the image redactor of MEDIA_POLICY=redact (each thread builds its own: see imageRedactorFor).
 */
export const requestOptions = (
  route: AttestationRoute,
  names: NameModel | "off",
  settings: TokeniserSettings,
  signal: AbortSignal,
  callSecret?: Uint8Array,
  redactImage?: ImageRedactor
): TokeniseRequestOptions => ({
  names,
  signal,
  // node:crypto's HMAC for the alias tags: the same aliases as WebCrypto's, without a thread-pool job per alias.
  hmacSha256: nodeHmacSha256,
  // The proxy parsed the body for this call (a worker got its own copy in the message): tokenised in place.
  bodyIsHandedOver: true,
  ...(route === "embeddings" && settings.stableAliasSecret !== undefined ? { stableAliasSecret: settings.stableAliasSecret } : {}),
  ...(settings.identifierSecret === undefined ? {} : { identifierSecret: settings.identifierSecret }),
  ...(settings.mediaPolicy === undefined ? {} : { mediaPolicy: settings.mediaPolicy }),
  ...(settings.passthroughPaths === undefined ? {} : { passthroughPaths: settings.passthroughPaths }),
  ...(callSecret === undefined ? {} : { secret: callSecret }),
  ...(redactImage === undefined ? {} : { redactImage })
})

export const inProcessTokeniser = (names: NameModel | "off", settings: TokeniserSettings = {}, redactImage?: NodeImageRedactor): RequestTokeniser => ({
  tokenise: (route, body, signal, callSecret) => tokeniseRequest(route, body, requestOptions(route, names, settings, signal, callSecret, redactImage)),
  close: async () => {
    await redactImage?.close()
  }
})

/**
 * The image redactor of a thread that tokenises (the proxy's own and each worker): under MEDIA_POLICY=redact only,
 * with the proxy's name model for names in the image. Its OCR worker starts with the first image, not before.
 */
export const imageRedactorFor = (names: NameModel | "off", settings: TokeniserSettings): NodeImageRedactor | undefined =>
  settings.mediaPolicy === "redact" ? createImageRedactor({ names }) : undefined
