import { canonicalString } from "../wire/crypto/jcs.ts"
import { checkEgressDepth, EgressRefusal, type EgressPlace, type EgressRoute, type EgressWalk, type MediaKind, walkEgress } from "../wire/egressPolicy.ts"
import { STABLE_TAG_LENGTH, tagFromMac } from "./alias.ts"
import { redactImagePart } from "./redactImagePart.ts"
import { createCheckpoint } from "./checkpoint.ts"
import { createSession, macUnder, type SessionOptions, type TokeniserSession } from "./session.ts"
import { tokeniseText } from "./tokeniseText.ts"
import type { AliasMap } from "./types.ts"

export type Route = EgressRoute

/** What the client does with an image, audio, file or document part it cannot read as text (MEDIA_POLICY). */
export type MediaPolicy = "refuse" | "redact" | "pass"

/** Paints over the identifiers an image shows (on-device OCR) and re-encodes it; see ocr/redactImage.ts. */
export type ImageRedactor = (image: { readonly bytes: Uint8Array; readonly mediaType: string }, signal?: AbortSignal) => Promise<{
  readonly bytes: Uint8Array
  readonly mediaType: string
}>

export interface TokeniseRequestOptions extends SessionOptions {
  /** An existing session for this request; by default a fresh one is created from the options. */
  readonly session?: TokeniserSession
  /**
   * Aborting it (the client went away, the time budget ran out) stops the work between two windows of
   * text; the promise then rejects with the signal's reason and nothing may be sent.
   */
  readonly signal?: AbortSignal
  /**
   * The device-held secret end-user identifiers (`user`, `metadata` values, `messages[].name`, ...) are aliased under:
   * the same end user gets the same `USER_<tag>` in every request. Default: a fresh random secret per request.
   */
  readonly identifierSecret?: Uint8Array
  /** Images, audio, files and documents the client cannot read as text: refused by default. */
  readonly mediaPolicy?: MediaPolicy
  /** Pointers (`*` for one segment) of fields the policy refuses or does not name, to send untokenised (declared). */
  readonly passthroughPaths?: ReadonlyArray<string>
  /** The image redactor `mediaPolicy: "redact"` uses; without one, images are refused under redact too. */
  readonly redactImage?: ImageRedactor
  /**
   * True when the caller hands `body` over and will not read it again (the local proxy, which parsed it for this
   * call): it is tokenised in place instead of on a copy (issue 41: the copy cost ~55 us on a 40-turn conversation).
   * Default false: the caller's body is left as it was.
   */
  readonly bodyIsHandedOver?: boolean
}

/** What an opt-in let through untokenised, for the attestation's `passthrough` claim (paths and kinds, never values). */
export interface PassthroughEntry {
  readonly path: string
  readonly kind: string
}

export interface TokenisedRequest {
  /** The request body with every text field tokenised (a copy; the input is not modified). */
  readonly body: unknown
  /** The exact bytes to send: UTF-8 of the RFC 8785 (JCS) form of `body`, so egress_sha256 hashes them. */
  readonly bodyBytes: Uint8Array
  /** Alias -> original, for detokenising the response. Keep it on the device. */
  readonly map: AliasMap
  /** Categories and counts of replaced values (never values), for the v3 attestation. */
  readonly detectorsFired: Record<string, number>
  /** True when the name model failed and `failOpen` let the request through without name detection. */
  readonly nameModelSkipped: boolean
  /** Always true: `bodyBytes` are the JCS text of `body` (TokenisedBody.canonical). */
  readonly canonical: true
  /** What MEDIA_POLICY or PASSTHROUGH_PATHS let through untokenised, sorted by path; empty when nothing was. */
  readonly passthrough: ReadonlyArray<PassthroughEntry>
}

export class InvalidRequestBody extends Error {
  readonly _tag = "InvalidRequestBody"
  constructor(message: string) {
    super(message)
    this.name = "InvalidRequestBody"
  }
}

/** A place in the body that holds user text: read it, then write its tokenised form back. */
interface TextSlot {
  readonly text: string
  readonly write: (tokenised: string) => void
  /** Run once after every slot is written (slots may share it): puts what the writes changed into the body. */
  readonly commit?: () => void
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const slot = (place: EgressPlace): TextSlot => {
  const holder = place.holder as Record<string | number, unknown>
  return { text: holder[place.key] as string, write: (t) => (holder[place.key] = t) }
}

/**
 * A tool call's `arguments`, a JSON text: the strings inside it, written back as JSON once one of them changed (an
 * unchanged one keeps its bytes). Text that is not JSON is tokenised as it is. These are the values the client
 * restored in the model's answer (the detokeniser restores tool-call arguments), so an app that sends the
 * conversation back would otherwise send them upstream in the clear.
 */
const jsonTextSlots = (place: EgressPlace): Array<TextSlot> => {
  const holder = place.holder as Record<string | number, unknown>
  const text = holder[place.key] as string
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return [slot(place)]
  }
  if (typeof parsed === "string") return [{ text: parsed, write: (t) => t !== parsed && (holder[place.key] = JSON.stringify(t)) }]
  // Serialised once for the whole arguments text, after its last value was written, not once per replaced value.
  let changed = false
  const commit = () => {
    if (changed) holder[place.key] = JSON.stringify(parsed)
  }
  const leaves: Array<EgressPlace> = []
  collectStrings({ parsed }, "parsed", leaves)
  return leaves.map((leaf) => {
    const inner = slot(leaf)
    return {
      text: inner.text,
      write: (t) => {
        if (t === inner.text) return
        inner.write(t)
        changed = true
      },
      commit
    }
  })
}

/** Every string inside a parsed JSON value (object values and array items, at any depth; keys are names). */
const collectStrings = (holder: EgressPlace["holder"], key: string | number, into: Array<EgressPlace>): void => {
  const value = (holder as Record<string | number, unknown>)[key]
  if (typeof value === "string") into.push({ holder, key, path: "" })
  else if (Array.isArray(value)) value.forEach((_, i) => collectStrings(value, i, into))
  else if (isObject(value)) for (const k of Object.keys(value)) collectStrings(value, k, into)
}

const textEncoder = new TextEncoder()

/** What an end-user identifier's MAC is taken over, and the alias its MAC gives (sdks/vectors/README.md). */
const endUserMessage = (value: string): string => `end-user\u0000${value}`
const endUserAliasOf = (mac: Uint8Array): string => `USER_${tagFromMac(mac, STABLE_TAG_LENGTH)}`

/** `USER_<tag>`: the device-stable alias of an end-user identifier (sdks/vectors/README.md "Stable end-user aliases"). */
export const endUserAlias = async (key: CryptoKey, value: string): Promise<string> =>
  endUserAliasOf(new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, textEncoder.encode(endUserMessage(value)))))

/** The MAC of end-user aliases: under the device's identifier secret, or a fresh random one for this request. */
const identifierMac = (opts: TokeniseRequestOptions) =>
  macUnder(opts.identifierSecret ?? globalThis.crypto.getRandomValues(new Uint8Array(32)), opts.hmacSha256)

const URL_PATTERN = /^https?:\/\//i

/** Every http(s) URL string inside a media value (an image part's `url`, a source's `url`, `file_url`, ...). */
const urlsIn = (value: unknown, into: Array<string> = []): Array<string> => {
  if (typeof value === "string") {
    if (URL_PATTERN.test(value)) into.push(value)
  } else if (Array.isArray(value)) for (const item of value) urlsIn(item, into)
  else if (isObject(value)) for (const key of Object.keys(value)) urlsIn(value[key], into)
  return into
}

const mediaRefusal = (path: string, kind: MediaKind, why: string) =>
  new EgressRefusal("unsupported_content", path, `The ${kind} at ${path} is not sent: ${why}. Nothing was sent.`, kind)

/**
 * The client's media policy over the walk's media parts: refused (the default), passed as they are (declared; a
 * remote URL holding an identifier is still refused), or, for images under `redact`, painted over on the device.
 */
const applyMediaPolicy = async (
  walk: EgressWalk,
  opts: TokeniseRequestOptions,
  passthrough: Array<PassthroughEntry>
): Promise<void> => {
  const policy = opts.mediaPolicy ?? "refuse"
  for (const media of walk.media) {
    const value = (media.holder as Record<string | number, unknown>)[media.key]
    if (policy === "refuse") throw mediaRefusal(media.path, media.kind, "the client does not send media it cannot tokenise (MEDIA_POLICY=refuse)")
    if (policy === "redact" && media.kind !== "image") {
      throw mediaRefusal(media.path, media.kind, `only images can be redacted on the device (MEDIA_POLICY=redact); set MEDIA_POLICY=pass to send ${media.kind} untokenised`)
    }
    if (policy === "redact") {
      if (opts.redactImage === undefined) throw mediaRefusal(media.path, media.kind, "this client has no image redactor")
      const redacted = await redactImagePart(value, media.path, opts.redactImage, opts.signal)
      ;(media.holder as Record<string | number, unknown>)[media.key] = redacted
      passthrough.push({ path: media.path, kind: "image-redacted" })
      continue
    }
    // pass: sent as it is, unless a remote URL names somebody (the URL text is read by the provider and its fetcher).
    for (const url of urlsIn(value)) {
      const probe = createSession({ names: "off" })
      if ((await tokeniseText(url, probe, opts.signal === undefined ? {} : { signal: opts.signal })) !== url) {
        throw mediaRefusal(media.path, media.kind, "its URL holds a personal identifier")
      }
    }
    passthrough.push({ path: media.path, kind: media.kind })
  }
}

/**
 * Tokenises one request body of a client route under the egress policy (sdks/vectors/egress-policy.json): user text
 * is tokenised (aliases numbered in document order), end-user identifiers get device-stable `USER_<tag>` aliases,
 * structure passes, and everything else is refused before anything is sent (EgressRefusal: a field or part type the
 * policy refuses or does not name, media under MEDIA_POLICY=refuse, nesting past 64 levels). A streamed chat
 * completion gets `stream_options.include_usage: true` so the provider reports usage (the gateway relays bytes
 * unchanged and cannot add it).
 * Rejects with NameModelUnavailable when names are enabled, the model fails and failOpen is not set,
 * and with `opts.signal`'s reason when it is aborted: the caller must then send nothing.
 */
export const tokeniseRequest = async (
  route: Route,
  body: unknown,
  opts: TokeniseRequestOptions = {}
): Promise<TokenisedRequest> => {
  if (!isObject(body)) throw new InvalidRequestBody("request body must be a JSON object")
  if (route !== "embeddings" && route !== "responses" && !Array.isArray(body.messages)) throw new InvalidRequestBody("messages must be an array")
  // Before the copy: a hostile nesting would overflow structuredClone's stack.
  checkEgressDepth(body)
  const copy = opts.bodyIsHandedOver === true ? body : structuredClone(body)
  const walk = walkEgress(route, copy, { depthChecked: true, ...(opts.passthroughPaths === undefined ? {} : { passthroughPaths: opts.passthroughPaths }) })
  const passthrough: Array<PassthroughEntry> = [...walk.passthrough]
  await applyMediaPolicy(walk, opts, passthrough)
  const session = opts.session ?? createSession(opts)
  const slots = walk.texts.flatMap((place) => (place.json === true ? jsonTextSlots(place) : [slot(place)]))
  // Register every text first so no alias can coincide with a string already present anywhere in the request.
  for (const s of slots) session.observe(s.text)
  // One checkpoint for the whole request: many short texts yield as often as one long one.
  const checkpoint = createCheckpoint(opts.signal)
  // In order, one at a time: aliases are numbered by first appearance in the request.
  for (const s of slots) s.write(await tokeniseText(s.text, session, { signal: opts.signal, checkpoint }))
  for (const commit of new Set(slots.map((s) => s.commit))) commit?.()
  await checkpoint()
  const detectorsFired: Record<string, number> = { ...session.detectorsFired }
  if (walk.identifiers.length > 0) {
    const mac = identifierMac(opts)
    for (const place of walk.identifiers) {
      const holder = place.holder as Record<string | number, unknown>
      holder[place.key] = endUserAliasOf(await mac(endUserMessage(holder[place.key] as string)))
    }
    detectorsFired.USER = (detectorsFired.USER ?? 0) + walk.identifiers.length
  }
  passthrough.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  if (route === "chat.completions" && copy.stream === true) {
    const streamOptions = isObject(copy.stream_options) ? copy.stream_options : {}
    copy.stream_options = { ...streamOptions, include_usage: true }
  }
  let canonical: string
  try {
    canonical = canonicalString(copy)
  } catch (cause) {
    // A string with a lone surrogate (JSON text may escape one): no canonical form, so nothing can be attested or sent.
    throw new InvalidRequestBody(`request body cannot be serialised as canonical JSON (${(cause as Error).message})`)
  }
  return {
    body: copy,
    bodyBytes: new TextEncoder().encode(canonical),
    map: session.map,
    detectorsFired,
    nameModelSkipped: session.nameModelSkipped,
    canonical: true,
    passthrough
  }
}
