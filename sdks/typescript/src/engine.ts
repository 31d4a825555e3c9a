/**
 * The on-device half of every private call: tokenise the body (detect -> alias), attest the exact egress bytes with
 * the device key, and later restore the originals in the answer. Portable: WebCrypto only.
 */
import {
  type AttestationRoute,
  type AttestationSigning,
  buildAttestation,
  encodeAttestationHeader,
  engineHeaderValue,
  type EngineIdentity
} from "./wire/attestation/v3.ts"
import {
  type AliasMap,
  builtinNameModel,
  compromiseNameModel,
  httpNameModel,
  EgressRefusal,
  idempotentAliasSecret,
  InvalidRequestBody,
  type NameModel,
  NameModelUnavailable,
  type PassthroughEntry,
  tokeniseRequest
} from "./tokeniser/index.ts"
import type { ImageRedactor, MediaPolicy } from "./tokeniser/tokeniseRequest.ts"
import { ConfigurationError, EgressRefusedError, InvalidRequestError, NameModelUnavailableError } from "./errors.ts"
import { inlineFiles, type InlinedFile } from "./files/inlineFiles.ts"
import type { FileLimits } from "./files/limits.ts"

/** `builtin` (the default), `compromise` (the built-in model plus the compromise library), `off`, or the http(s) URL of a name model service. */
export type NameModelSetting = "builtin" | "compromise" | "off" | (string & {})

export interface Engine {
  readonly identity: EngineIdentity
  readonly deviceKey: () => Promise<CryptoKeyPair>
  readonly names: NameModel | "off"
  /** Present when stable aliases may be used (embeddings by default); never leaves the device. */
  readonly stableAliasSecret: (() => Promise<Uint8Array | undefined>) | undefined
  /**
   * The device-held secret end-user identifiers are aliased under (`USER_<tag>`, the same in every request from the
   * device); a fresh random one per request when absent or when it answers undefined. Never leaves the device.
   */
  readonly identifierSecret?: () => Promise<Uint8Array | undefined>
  /** The client's egress opt-ins (the egress policy refuses media and unnamed fields by default). */
  readonly egress?: EgressSettings
  /** Limits for files attached to calls (default: 20 MB each). */
  readonly fileLimits?: Partial<FileLimits>
  /**
   * Tokenises elsewhere than on the calling thread (the local proxy's worker threads, which hold their own name model
   * and alias secret); `names` and `stableAliasSecret` are then not used. It throws as tokeniseRequest does.
   */
  readonly tokenise?: (route: AttestationRoute, body: unknown, signal: AbortSignal | undefined, callSecret: Uint8Array | undefined) => Promise<TokenisedBody>
  /** The hash and signature primitives of the attestation (default WebCrypto; the local proxy uses node:crypto's). */
  readonly attestationSigning?: AttestationSigning
}

/** What a client may let through the egress policy untokenised (declared in the attestation). */
export interface EgressSettings {
  /** MEDIA_POLICY: images, audio, files and documents are refused by default. */
  readonly mediaPolicy?: MediaPolicy
  /** PASSTHROUGH_PATHS: JSON pointers (`*` for one segment) of fields to send untokenised. */
  readonly passthroughPaths?: ReadonlyArray<string>
  /** The image redactor MEDIA_POLICY=redact uses (ocr/redactImage.ts on Node). */
  readonly redactImage?: ImageRedactor
}

/** What tokenising one body yields. */
export interface TokenisedBody {
  readonly bodyBytes: Uint8Array
  readonly map: AliasMap
  readonly detectorsFired: Readonly<Record<string, number>>
  /** True when `bodyBytes` are the JCS text of the body (tokeniseRequest's always are): the attestation hashes them as they are. */
  readonly canonical?: boolean
  /** What an opt-in let through untokenised (the attestation's `passthrough` claim). */
  readonly passthrough?: ReadonlyArray<PassthroughEntry>
}

export const nameModelOf = (setting: NameModelSetting | undefined, fetchImpl?: typeof fetch): NameModel | "off" => {
  if (setting === undefined || setting === "builtin") return builtinNameModel
  if (setting === "off") return "off"
  if (setting === "compromise") return compromiseNameModel
  let url: URL
  try {
    url = new URL(setting)
  } catch {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: `nameModel must be "builtin", "compromise", "off" or an http(s) URL, not ${JSON.stringify(setting)}.` })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: "A name model URL must be http(s)." })
  }
  return httpNameModel({ url: url.toString(), ...(fetchImpl ? { fetch: fetchImpl } : {}) })
}

/** What leaves the device for one call, and what stays to restore the answer. */
export interface PreparedCall {
  readonly bodyBytes: Uint8Array
  /** `X-Service-Engine` and `X-Service-Attestation`. */
  readonly headers: Readonly<Record<string, string>>
  /** Alias -> original; stays on the device. */
  readonly map: AliasMap
  /** The tokenised body (what the provider will see), for display ("what left your device"). */
  readonly tokenisedBody: unknown
  readonly detectorsFired: Readonly<Record<string, number>>
  /** Files of the request read on this device and sent as their tokenised text. */
  readonly files: ReadonlyArray<InlinedFile>
}

const tokeniseHere = async (engine: Engine, route: AttestationRoute, body: unknown, signal: AbortSignal | undefined, callSecret: Uint8Array | undefined) => {
  const secret = route === "embeddings" && engine.stableAliasSecret !== undefined ? await engine.stableAliasSecret() : undefined
  const identifierSecret = engine.identifierSecret === undefined ? undefined : await engine.identifierSecret()
  return tokeniseRequest(route, body, {
    names: engine.names,
    ...engine.egress,
    ...(secret === undefined ? {} : { stableAliasSecret: secret }),
    ...(identifierSecret === undefined ? {} : { identifierSecret }),
    ...(callSecret === undefined ? {} : { secret: callSecret }),
    ...(signal === undefined ? {} : { signal })
  })
}

/** The SDK's error for a refusal of the egress policy (nothing was sent); the local proxy answers it over HTTP. */
export const egressRefusedError = (refusal: EgressRefusal): EgressRefusedError =>
  new EgressRefusedError({
    status: 0,
    code: refusal.code,
    message: refusal.message,
    body: { code: refusal.code, message: refusal.message, details: refusal.details },
    cause: refusal
  })

/**
 * The alias secret of a call sent with an explicit Idempotency-Key (idempotentAliasSecret.ts): a retry of the call
 * tokenises to the same bytes, so the gateway replays the first answer. Undefined without a key, or on a device that
 * keeps no alias secret: a fresh random secret then, as for every other call.
 */
export const callAliasSecret = async (engine: Engine, idempotencyKey: string | undefined): Promise<Uint8Array | undefined> => {
  if (idempotencyKey === undefined || engine.stableAliasSecret === undefined) return undefined
  const device = await engine.stableAliasSecret()
  return device === undefined ? undefined : idempotentAliasSecret(device, idempotencyKey)
}

/**
 * Tokenises and attests one relay body. Throws NameModelUnavailableError (fail-closed), InvalidRequestError or
 * FileError; an aborted `signal` stops the tokeniser between two windows of text and rejects with its reason.
 */
export const prepareCall = async (
  engine: Engine,
  route: AttestationRoute,
  input: unknown,
  options: { readonly signal?: AbortSignal; /** Per-call alias secret (callAliasSecret); fresh random when absent. */ readonly aliasSecret?: Uint8Array } = {}
): Promise<PreparedCall> => {
  // Attached files become text parts first (a file the device cannot read refuses the call: FileError, nothing sent).
  const { body, files } = await inlineFiles(route, input, { limits: engine.fileLimits })
  let tokenised: TokenisedBody & { readonly body?: unknown }
  try {
    tokenised = engine.tokenise === undefined
      ? await tokeniseHere(engine, route, body, options.signal, options.aliasSecret)
      : await engine.tokenise(route, body, options.signal, options.aliasSecret)
  } catch (error) {
    if (error instanceof NameModelUnavailable) {
      throw new NameModelUnavailableError({
        status: 0,
        code: "name_model_unavailable",
        message: `The name model is unavailable (${error.message}); nothing was sent (fail-closed). Fix the name model, or use nameModel "builtin" or "off".`,
        cause: error
      })
    }
    if (error instanceof InvalidRequestBody) throw new InvalidRequestError({ status: 0, code: "invalid_request", message: error.message, cause: error })
    if (error instanceof EgressRefusal) throw egressRefusedError(error)
    throw error
  }
  const attestation = await buildAttestation({
    route,
    bodyBytes: tokenised.bodyBytes,
    detectorsFired: tokenised.detectorsFired,
    engine: engine.identity,
    keyPair: await engine.deviceKey(),
    bodyIsCanonical: tokenised.canonical === true,
    passthrough: tokenised.passthrough ?? [],
    ...(engine.attestationSigning === undefined ? {} : { signing: engine.attestationSigning })
  })
  const bodyBytes = tokenised.bodyBytes
  const tokenisedBody = tokenised.body
  return {
    bodyBytes,
    headers: { "x-service-engine": engineHeaderValue(engine.identity), "x-service-attestation": encodeAttestationHeader(attestation) },
    map: tokenised.map,
    // A tokeniser in another thread hands back bytes only; the object is read from them when someone asks.
    get tokenisedBody() {
      return tokenisedBody !== undefined ? tokenisedBody : JSON.parse(new TextDecoder().decode(bodyBytes))
    },
    detectorsFired: tokenised.detectorsFired,
    files
  }
}
