import type { CountryCode } from "libphonenumber-js/max"
import { formatAlias, tagFromMac } from "./alias.ts"
import { structuredDetectors } from "./detectStructured.ts"
import type { Detector } from "./detectors/Detector.ts"
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
  /** Regions whose national phone formats are recognised. */
  readonly phoneRegions?: ReadonlyArray<CountryCode>
}

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

export const createSession = (opts: SessionOptions = {}): TokeniserSession => {
  const secret = opts.secret ?? globalThis.crypto.getRandomValues(new Uint8Array(32))
  const key = globalThis.crypto.subtle.importKey("raw", secret as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  const map = new Map<string, string>()
  const byValue = new Map<string, Promise<string>>()
  const counters = new Map<EntityType, number>()
  const fired: Record<string, number> = {}
  const observed: Array<string> = []
  let nameModelSkipped = false

  const collides = (alias: string) => map.has(alias) || observed.some((t) => t.includes(alias))

  const mint = async (type: EntityType, index: number, value: string): Promise<string> => {
    const k = await key
    for (let attempt = 0; ; attempt++) {
      const mac = new Uint8Array(
        await globalThis.crypto.subtle.sign("HMAC", k, new TextEncoder().encode(`${type}_${index}#${attempt}`))
      )
      const alias = formatAlias(type, index, tagFromMac(mac))
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
      observed.push(text)
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
