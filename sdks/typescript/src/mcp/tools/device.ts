/**
 * Tools that run on this device only (no network): tokenise, detokenise, detect_pii, count_tokens, engine_info.
 * Aliases minted here join the session's alias map, so a later detokenise or reconstruct of the same session can
 * restore them; no other session can.
 */
import { z } from "zod"
import { ALIAS_PATTERN } from "../../tokeniser/alias.ts"
import { NameModelUnavailable } from "../../tokeniser/NameModel.ts"
import { ENTITY_TYPES } from "../../tokeniser/types.ts"
import type { SessionContext, ToolDefinition } from "../context.ts"
import { loadEngine } from "../engine.ts"
import { ok, pretty, ToolError } from "../toolResult.ts"

/** Texts above this are refused (a tool call is interactive; use tokenise_file for documents). */
export const MAX_TEXT_CHARS = 1_000_000

const text = z.string().max(MAX_TEXT_CHARS)

const counts = z.record(z.string(), z.number())

/** Runs the engine, turning a failed name model into the stable `name_model_unavailable` tool error (fail-closed). */
export const withNameModel = async <A>(work: () => Promise<A>): Promise<A> => {
  try {
    return await work()
  } catch (error) {
    if (error instanceof NameModelUnavailable) {
      throw new ToolError("name_model_unavailable", `The name model is unavailable (${error.message}); nothing was tokenised (fail-closed). Fix NAME_MODEL, or set it to "builtin" or "off".`)
    }
    throw error
  }
}

/** Tokenises `input` with a fresh engine session and adds its aliases to the MCP session's map. */
export const tokeniseForSession = async (input: string, session: SessionContext) => {
  const { createSession, tokeniseText } = await loadEngine()
  const engine = createSession({ names: await session.shared.names() })
  const tokenised = await withNameModel(() => tokeniseText(input, engine))
  session.aliases.add(engine.map)
  return { text: tokenised, replaced: engine.map.size, detectorsFired: { ...engine.detectorsFired } }
}

/** Restores this session's aliases in `input`; aliases this session does not hold are listed, not guessed. */
export const restoreForSession = (input: string, session: SessionContext) => {
  const unknown = new Set<string>()
  let restored = 0
  const out = input.replace(new RegExp(ALIAS_PATTERN.source, "g"), (alias) => {
    const original = session.aliases.get(alias)
    if (original === undefined) {
      unknown.add(alias)
      return alias
    }
    restored++
    return original
  })
  return { text: out, restored, unknown: [...unknown] }
}

const tokenise: ToolDefinition<{ text: string }> = {
  name: "tokenise",
  title: "Tokenise personal data on this device",
  description:
    "Replaces personal data in a text (e-mail addresses, phone numbers, card numbers, national ids, IBANs, IP addresses, dates of birth, passports, crypto wallets, credentials in URLs, and person names) with aliases such as <EMAIL_1_k3f9>, on this device. Use it before sending text anywhere. The aliases are remembered in this session only, so `detokenise` and `reconstruct` can restore the originals later.",
  input: z.strictObject({ text: text.describe("The text to tokenise.") }),
  output: z.looseObject({ text: z.string(), replaced: z.number(), detectors_fired: counts }),
  run: async ({ text }, session) => {
    const result = await tokeniseForSession(text, session)
    return ok({ text: result.text, replaced: result.replaced, detectors_fired: result.detectorsFired }, result.text)
  }
}

const detokenise: ToolDefinition<{ text: string }> = {
  name: "detokenise",
  title: "Restore originals in a text",
  description:
    "Replaces the aliases (<TYPE_n_tag>) that this session's tokenise, tokenise_file or private_* calls created with the original values, on this device. Fails with `unknown_alias` when the text holds an alias this session never created (or has forgotten after being idle).",
  input: z.strictObject({ text: text.describe("Text containing aliases, e.g. a model's answer.") }),
  output: z.looseObject({ text: z.string(), restored: z.number() }),
  run: async ({ text }, session) => {
    const result = restoreForSession(text, session)
    if (result.unknown.length > 0) {
      throw new ToolError("unknown_alias", `This session holds no original for ${result.unknown.slice(0, 5).join(", ")}${result.unknown.length > 5 ? ` and ${result.unknown.length - 5} more` : ""}. Only aliases created in this MCP session can be restored.`)
    }
    return ok({ text: result.text, restored: result.restored }, result.text)
  }
}

const detectPii: ToolDefinition<{ text: string }> = {
  name: "detect_pii",
  title: "Find personal data in a text",
  description:
    "Lists the personal data found in a text, on this device, without changing it: each entity's type and its offsets (UTF-16 code units, end exclusive). Nothing is remembered.",
  input: z.strictObject({ text: text.describe("The text to scan.") }),
  output: z.looseObject({
    entities: z.array(z.looseObject({ type: z.string(), start: z.number(), end: z.number() })),
    counts
  }),
  run: async ({ text }, session) => {
    const { createSession, detectSpans } = await loadEngine()
    const names = await session.shared.names()
    const spans = await withNameModel(() => detectSpans(text, createSession({ names })))
    const tally: Record<string, number> = {}
    for (const s of spans) tally[s.type] = (tally[s.type] ?? 0) + 1
    const entities = spans.map((s) => ({ type: s.type, start: s.start, end: s.end }))
    const summary = entities.length === 0 ? "No personal data found." : entities.map((e) => `${e.type} at ${e.start}-${e.end}`).join("\n")
    return ok({ entities, counts: tally }, summary)
  }
}

// Loaded on first use: each encoding's table takes a while to load and most sessions never count tokens.
const ENCODINGS = {
  o200k_base: () => import("gpt-tokenizer/encoding/o200k_base"),
  cl100k_base: () => import("gpt-tokenizer/encoding/cl100k_base")
} as const

const countTokensTool: ToolDefinition<{ text: string; encoding?: keyof typeof ENCODINGS }> = {
  name: "count_tokens",
  title: "Count tokens",
  description:
    "Counts the tokens of a text with an OpenAI BPE encoding (o200k_base, used by GPT-4o and later, by default; or cl100k_base), on this device. Other providers' tokenizers differ by a few percent: treat it as an estimate for them.",
  input: z.strictObject({
    text: text.describe("The text to count."),
    encoding: z.enum(["o200k_base", "cl100k_base"]).optional().describe("Default o200k_base.")
  }),
  output: z.looseObject({ tokens: z.number(), encoding: z.string(), characters: z.number() }),
  run: async ({ text, encoding = "o200k_base" }) => {
    const tokens = (await ENCODINGS[encoding]()).countTokens(text)
    return ok({ tokens, encoding, characters: text.length }, `${tokens} tokens (${encoding})`)
  }
}

const engineInfo: ToolDefinition<Record<string, never>> = {
  name: "engine_info",
  title: "About the on-device engine",
  description:
    "Describes the tokenisation engine running on this device: its id, version and source fingerprint (sha256, the value attested to the gateway), the entity types it detects, and the name model's setting and state.",
  input: z.strictObject({}),
  output: z.looseObject({ engine: z.looseObject({ id: z.string(), version: z.string(), sha256: z.string() }), detectors: z.array(z.string()), name_model: z.looseObject({ setting: z.string(), state: z.string() }) }),
  run: async (_args, session) => {
    const { settings, engine } = session.shared
    const names = await session.shared.names()
    let state: string
    if (names === "off") state = "off"
    else {
      try {
        await names.detect("Jane Doe wrote to Anna.", { signal: AbortSignal.timeout(3000) })
        state = "available"
      } catch {
        state = "unavailable"
      }
    }
    const structured = {
      engine: { id: engine.id, version: engine.version, sha256: engine.sha256 },
      detectors: [...ENTITY_TYPES],
      name_model: { setting: settings.nameModel, state, fail_closed: true }
    }
    return ok(structured, pretty(structured))
  }
}

export const deviceTools: ReadonlyArray<ToolDefinition> = [tokenise, detokenise, detectPii, countTokensTool, engineInfo]
