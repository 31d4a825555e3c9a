/**
 * Shared vocabulary of the client-side tokeniser. Pure TypeScript: runs in Node, Deno and browsers.
 */

/** Every category the engine can tokenise. The alias of a value carries its category, e.g. `<EMAIL_1_k3f9>`. */
export const ENTITY_TYPES = [
  "EMAIL",
  "PHONE",
  "CARD",
  "US_SSN",
  "UK_NINO",
  "ES_DNI",
  "FR_NIR",
  "NL_BSN",
  /** Other national identifiers validated by their check rule (Swiss AHV, Belgian, PPSN, Steuer-ID, codice fiscale, PESEL, personnummer, CPR, HETU). */
  "NATIONAL_ID",
  "IBAN",
  "IPV4",
  "IPV6",
  "DATE_OF_BIRTH",
  "PASSPORT",
  /** The machine-readable zone of a passport or identity card (ICAO 9303), whole, validated by its check digits. */
  "MRZ",
  "CRYPTO_WALLET",
  "URL_CREDENTIALS",
  "PERSON"
] as const

export type EntityType = (typeof ENTITY_TYPES)[number]

/** The types found by deterministic, validated detectors (no model involved). */
export type StructuredType = Exclude<EntityType, "PERSON">

/** A detected value: UTF-16 code unit offsets into the scanned text, `end` exclusive. */
export interface Span {
  readonly start: number
  readonly end: number
  readonly type: EntityType
}

/** Alias -> original value, for ONE request. It never leaves the device. */
export type AliasMap = ReadonlyMap<string, string>
