import type { CountryCode } from "libphonenumber-js/max"
import { ALIAS_PATTERN, formatAlias, formatStableAlias, STABLE_TAG_LENGTH, tagFromMac } from "./alias.ts"
import { structuredDetectors } from "./detectStructured.ts"
import type { Detector } from "./detectors/Detector.ts"
import { allMatches } from "./detectors/reusedRegex.ts"
import { builtinNameModel } from "./builtinNameModel.ts"
import type { NameModel } from "./NameModel.ts"
import type { AliasMap, EntityType } from "./types.ts"

export interface SessionOptions {
  /** Name model: the built-in on-device model by default; "off" disables name detection. */
  readonly names?: NameModel | "off"
  /** When true, a failing name model is skipped (structured types are still tokenised). Default false. */
  readonly failOpen?: boolean
  /** The per-request secret the alias tags derive from. Default: 32 fresh random bytes. */
  readonly secret?: Uint8Array
  /**
   * Stable aliases: each alias is derived from the value itself under this secret (HMAC-SHA256), so the same value
   * gets the same alias in every request made with the same secret (repeatable embeddings). The secret must stay on
   * the device (never sent, never logged). Trade-off: the provider can link one value across calls. Default: unset,
   * per-request aliases.
   */
  readonly stableAliasSecret?: Uint8Array
  /** Regions whose national phone formats are recognised. */
  readonly phoneRegions?: ReadonlyArray<CountryCode>
  /**
   * HMAC-SHA256 of `message` under `secret`, for alias tags. Default: WebCrypto, which is asynchronous (a key import
   * per request and a thread-pool job per alias). Node's synchronous one (client/nodeAliasMac.ts, the local proxy's)
   * gives the same bytes in a few microseconds (issue 41: ~150 us of the proxy's CPU on a turn with three values).
   */
  readonly hmacSha256?: HmacSha256
}

/** HMAC-SHA256 (32 bytes) of `message` under `secret`, synchronously or not. */
export type HmacSha256 = (secret: Uint8Array, message: Uint8Array) => Uint8Array | Promise<Uint8Array>

/** Everything that belongs to ONE request: its secret, its aliases, its counters. Never reuse across requests. */
export interface TokeniserSession {
  readonly names: NameModel | "off"
  readonly failOpen: boolean
  readonly detectors: ReadonlyArray<Detector>
  /** Alias -> original, for detokenising this request's responses. */
  readonly map: AliasMap
  /** Categories and how many values of each were replaced (never the values). */
  readonly detectorsFired: Readonly<Record<string, number>>
  /** True when the name model failed and failOpen let the request proceed without names. */
  readonly nameModelSkipped: boolean
  /** Registers text of this request so that no alias can equal a string already present in it. */
  readonly observe: (text: string) => void
  /** The alias of `value` as `type`; the same pair always gets the same alias within the session. */
  readonly aliasFor: (type: EntityType, value: string) => Promise<string>
  readonly countFired: (type: EntityType) => void
  readonly markNameModelSkipped: () => void
}

const hmacKey = (secret: Uint8Array) =>
  globalThis.crypto.subtle.importKey("raw", secret as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])

const messageEncoder = new TextEncoder()

/**
 * The MAC of one secret, as a function of the message: `hmacSha256`'s when given, else WebCrypto's, whose key is
 * imported on the first message, not before.
 */
export const macUnder = (secret: Uint8Array, hmacSha256: HmacSha256 | undefined): ((message: string) => Promise<Uint8Array>) => {
  if (hmacSha256 !== undefined) return async (message) => hmacSha256(secret, messageEncoder.encode(message))
  let key: Promise<CryptoKey> | undefined
  return async (message) => new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", await (key ??= hmacKey(secret)), messageEncoder.encode(message)))
}

export const createSession = (opts: SessionOptions = {}): TokeniserSession => {
  // The keys (and the per-request secret) are made when the first alias is minted: most chat turns carry no
  // personal data and never need one, and importing an HMAC key is a WebCrypto job per request (issue 24: about
  // 40 us of the local proxy's CPU per "Say hello." call). Still one fresh secret per session, never shared.
  let stableMac: ((message: string) => Promise<Uint8Array>) | undefined
  let perRequestMac: ((message: string) => Promise<Uint8Array>) | undefined
  const stableMacOf = (secret: Uint8Array) => (stableMac ??= macUnder(secret, opts.hmacSha256))
  const perRequest = () => (perRequestMac ??= macUnder(opts.secret ?? globalThis.crypto.getRandomValues(new Uint8Array(32)), opts.hmacSha256))
  const map = new Map<string, string>()
  const byValue = new Map<string, Promise<string>>()
  const counters = new Map<EntityType, number>()
  const fired: Record<string, number> = {}
  // Every alias-shaped string in the request's texts: looked up per minted alias instead of searching
  // every text again for each new alias (which cost the text length times the number of aliases).
  const observed = new Set<string>()
  let nameModelSkipped = false

  const collides = (alias: string) => map.has(alias) || observed.has(alias)

  // Stable: from the value (attempt 0 is the alias every request agrees on; a clash with text of this request or
  // with another value's alias, practically never, moves this request to the next attempt). Per request: from
  // the type and number only, so the alias says nothing about the value.
  const candidate = async (type: EntityType, index: number, value: string, attempt: number): Promise<string> =>
    opts.stableAliasSecret === undefined
      ? formatAlias(type, index, tagFromMac(await perRequest()(`${type}_${index}#${attempt}`)))
      : formatStableAlias(
        type,
        tagFromMac(await stableMacOf(opts.stableAliasSecret)(attempt === 0 ? `${type}\u0000${value}` : `${type}\u0000${value}\u0000${attempt}`), STABLE_TAG_LENGTH)
      )

  const mint = async (type: EntityType, index: number, value: string): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      const alias = await candidate(type, index, value, attempt)
      if (!collides(alias)) {
        map.set(alias, value)
        return alias
      }
    }
  }

  return {
    names: opts.names ?? builtinNameModel,
    failOpen: opts.failOpen ?? false,
    detectors: structuredDetectors(opts.phoneRegions === undefined ? {} : { phoneRegions: opts.phoneRegions }),
    map,
    detectorsFired: fired,
    get nameModelSkipped() {
      return nameModelSkipped
    },
    observe: (text) => {
      for (const [aliasLike] of allMatches(text, ALIAS_PATTERN)) observed.add(aliasLike)
    },
    aliasFor: (type, value) => {
      const id = `${type}\u0000${value}`
      const existing = byValue.get(id)
      if (existing !== undefined) return existing
      // The index is taken synchronously, so concurrent calls still number values in call order.
      const index = (counters.get(type) ?? 0) + 1
      counters.set(type, index)
      const alias = mint(type, index, value)
      byValue.set(id, alias)
      return alias
    },
    countFired: (type) => {
      fired[type] = (fired[type] ?? 0) + 1
    },
    markNameModelSkipped: () => {
      nameModelSkipped = true
    }
  }
}
