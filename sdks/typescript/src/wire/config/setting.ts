/**
 * The one way a program reads its settings: a schema, an object of `Setting`s, read whole by `readSettings` at
 * start-up. Each setting names its environment variable, says what values it allows and what its default is, and
 * parses the raw string into a typed value or throws `ConfigInvalid` with one line naming the variable and what is
 * allowed. A program reads every setting of its schema before it starts serving, so a typo stops it at once instead
 * of becoming `NaN` (or a silent default) somewhere later. docs/configuration.md is tested against the schemas
 * (test/docs/configurationSchema.test.ts).
 *
 * One copy for every program: the gateway's (src/config/gatewaySettings.ts) and the client programs' (the local proxy,
 * the MCP server, the demo) schemas are built from it. It lives in the SDK's wire format because that is the one part
 * of the SDK the gateway may import. No imports on purpose: the operator CLI and the fake provider read settings
 * without loading `effect`, and the SDK's browser entry may reach it (nothing Node-only here).
 */

export type Env = Readonly<Record<string, string | undefined>>

/** A setting has a value the program refuses; `message` is the one line an operator sees. */
export class ConfigInvalid extends Error {
  readonly _tag = "ConfigInvalid"
}

export interface Setting<A> {
  /** The environment variable; for a family of variables, its pattern (`PROVIDER_<SLUG>_TIMEOUT_MS`). */
  readonly name: string
  /** Other variables this setting reads (`DATABASE_URL_FILE` for `DATABASE_URL`). */
  readonly alsoReads?: ReadonlyArray<string>
  /** What is allowed, in words: the error line ends with it. */
  readonly allowed: string
  /** The default in words (`unset` when there is none). */
  readonly fallback: string
  readonly read: (env: Env) => A
}

export type Schema = Readonly<Record<string, Setting<unknown>>>
export type SettingsOf<S extends Schema> = { readonly [K in keyof S]: S[K] extends Setting<infer A> ? A : never }

/** Every setting of `schema`, parsed; throws `ConfigInvalid` on the first bad value (schema order). */
export const readSettings = <S extends Schema>(schema: S, env: Env): SettingsOf<S> => {
  const out: Record<string, unknown> = {}
  for (const [key, setting] of Object.entries(schema)) out[key] = setting.read(env)
  return out as SettingsOf<S>
}

/**
 * `readSettings` with a second source under the environment, such as a config file: `fallback` maps a schema key to
 * the value the file gives it. A variable set (not blank) in the environment wins; a bad value taken from the file is
 * refused with `where(key)` appended, so the line says which file and key to fix.
 */
export const readSettingsWithFallback = <S extends Schema>(
  schema: S,
  env: Env,
  fallback: Partial<Readonly<Record<keyof S & string, string>>>,
  where: (key: keyof S & string) => string
): SettingsOf<S> => {
  const out: Record<string, unknown> = {}
  for (const [key, setting] of Object.entries(schema) as Array<[keyof S & string, Setting<unknown>]>) {
    const fromFallback = fallback[key]
    if (fromFallback === undefined || nonEmpty(env[setting.name]) !== undefined) {
      out[key] = setting.read(env)
      continue
    }
    try {
      out[key] = setting.read({ ...env, [setting.name]: fromFallback })
    } catch (error) {
      throw error instanceof ConfigInvalid ? new ConfigInvalid(`${error.message} (${where(key)})`) : error
    }
  }
  return out as SettingsOf<S>
}

/** Every variable a schema reads (for the documentation test). */
export const variableNames = (schema: Schema): ReadonlyArray<string> =>
  Object.values(schema).flatMap((setting) => [setting.name, ...(setting.alsoReads ?? [])])

/** A blank value counts as unset everywhere (compose files and systemd units write `NAME=` to mean "none"). */
export const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s.trim() === "" ? undefined : s.trim())

const invalid = (name: string, allowed: string, raw?: string): never => {
  // Only short values are echoed: a long one is more likely a pasted secret than a typo.
  const shown = raw !== undefined && raw.length <= 40 && !/_(FILE|URL)$/.test(name) ? `, got "${raw}"` : ""
  throw new ConfigInvalid(`${name} must be ${allowed}${shown}`)
}

/** A setting whose parse is its own (`raw` is the variable's value as set, `undefined` when unset). */
export const custom = <A>(
  name: string,
  allowed: string,
  fallback: string,
  parse: (raw: string | undefined, fail: (raw?: string) => never) => A,
  alsoReads?: ReadonlyArray<string>
): Setting<A> => ({
  name,
  allowed,
  fallback,
  ...(alsoReads === undefined ? {} : { alsoReads }),
  read: (env) => parse(env[name], (raw) => invalid(name, allowed, raw))
})

/** Free text, trimmed; blank is unset. */
export const text = (name: string, fallback = "unset"): Setting<string | undefined> =>
  custom(name, "any text", fallback, (raw) => nonEmpty(raw))

/** A number within [min, max] (`integer`: whole numbers only); blank or unset is `fallback`. */
export const numberIn = (
  name: string,
  options: { readonly fallback: number; readonly min: number; readonly max?: number; readonly integer?: boolean; readonly unit?: string }
): Setting<number> => {
  const { fallback, min, max = Number.MAX_SAFE_INTEGER, integer = true, unit = "" } = options
  const of = unit === "" ? "" : ` of ${unit}`
  const allowed = max !== Number.MAX_SAFE_INTEGER
    ? `${integer ? "a whole number" : "a number"}${of} from ${min} to ${max}`
    : integer && min === 1
    ? `a positive whole number${of}`
    : `${integer ? "a whole number" : "a number"}${of}, ${min} or more`
  return custom(name, allowed, String(fallback), (raw, fail) => {
    const v = raw?.trim()
    if (v === undefined || v === "") return fallback
    const n = Number(v)
    if (!(integer ? /^[0-9]+$/.test(v) && Number.isSafeInteger(n) : /^[0-9]+(\.[0-9]+)?$/.test(v)) || n < min || n > max) return fail(raw)
    return n
  })
}

/** on/off (also 1/0, true/false, any case). */
export const onOff = (name: string, fallback: boolean): Setting<boolean> =>
  custom(name, "on or off", fallback ? "on" : "off", (raw, fail) => {
    const v = raw?.trim().toLowerCase()
    if (v === undefined || v === "") return fallback
    if (["on", "1", "true"].includes(v)) return true
    if (["off", "0", "false"].includes(v)) return false
    return fail(raw)
  })

/** One of `choices` (lower-cased); blank or unset is `fallback`. */
export const oneOf = <const C extends string, F extends C | undefined>(name: string, choices: ReadonlyArray<C>, fallback: F): Setting<C | F> =>
  custom(name, `one of ${choices.join(", ")}${fallback === undefined ? " (or unset)" : ""}`, fallback ?? "unset", (raw, fail) => {
    const v = raw?.trim().toLowerCase()
    if (v === undefined || v === "") return fallback
    return choices.includes(v as C) ? (v as C) : fail(raw)
  })

/** A port number (0: any free port); blank or unset is `fallback`. */
export const port = (name: string, fallback: number): Setting<number> =>
  custom(name, "a port number (0-65535)", String(fallback), (raw, fail) => {
    const v = nonEmpty(raw)
    if (v === undefined) return fallback
    const n = Number(v)
    return /^[0-9]+$/.test(v) && n <= 65535 ? n : fail(raw)
  })

/**
 * Every variable whose name matches `pattern` (a family such as `PROVIDER_<SLUG>_TIMEOUT_MS`), each parsed by
 * `parse`; the result maps the pattern's captured part (`OPENAI`) to the value.
 */
export const family = <A>(
  name: string,
  pattern: RegExp,
  allowed: string,
  parse: (raw: string, fail: () => never) => A
): Setting<ReadonlyMap<string, A>> => ({
  name,
  allowed,
  fallback: "unset",
  read: (env) => {
    const out = new Map<string, A>()
    for (const [variable, raw] of Object.entries(env)) {
      const match = pattern.exec(variable)
      if (match === null || raw === undefined || raw.trim() === "") continue
      out.set(match[1]!, parse(raw, () => invalid(variable, allowed, raw)))
    }
    return out
  }
})
