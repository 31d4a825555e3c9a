/**
 * Tools that call the gateway through the SDK's RelayClient: private_completion and private_messages (tokenised and
 * attested on this device, detokenised here, with the receipt verified offline), list_models, get_balance,
 * usage_summary and key_scopes (the key's own organisation, with the gateway key only), and meter (this session's
 * calls, from the receipts it received).
 */
import { z } from "zod"
import type { SessionContext, ToolDefinition } from "../context.ts"
import type { Receipt } from "../localReceipts.ts"
import { ok, pretty } from "../toolResult.ts"
import { restoreForSession } from "./device.ts"

type Json = Record<string, any>

/** Keeps the receipt of a call: on the device for the receipt tools, and in the session for meter. */
const keepReceipt = (receipt: Receipt | undefined, session: SessionContext) => {
  if (receipt === undefined) return
  session.shared.receipts.add(receipt)
  session.received.push(receipt)
}

/**
 * The call's aliases join the session's map, like tokenise's: a later detokenise or reconstruct in this session can
 * restore what the model saw (tokenised_request) or an answer the host kept with aliases in it.
 */
const keepAliases = (aliases: ReadonlyMap<string, string> | undefined, session: SessionContext) => {
  if (aliases !== undefined) session.aliases.add(aliases)
}

/** The relay answer's metadata every private_* result carries. */
const metaOf = (answer: Json) => ({
  request_id: answer.requestId ?? null,
  receipt: answer.receipt ?? null,
  receipt_verified: answer.receiptVerified ?? null,
  receipt_verification: answer.receiptVerification ?? null,
  countersignature: answer.countersignature ?? null,
  tokenised_request: answer.tokenisedRequest ?? null
})

/** Aliases the caller put in the prompt itself (from tokenise) come back restored too, from this session's map. */
const restoreSessionAliases = (text: string, session: SessionContext) => restoreForSession(text, session).text

const relayMeta = {
  request_id: z.string().nullable(),
  receipt: z.looseObject({}).nullable(),
  receipt_verified: z.boolean().nullable(),
  receipt_verification: z.looseObject({}).nullable(),
  countersignature: z.looseObject({}).nullable(),
  tokenised_request: z.unknown()
}

const chatMessage = z.strictObject({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.string().max(1_000_000)
})

const privateCompletion: ToolDefinition<{ model: string; messages: Array<{ role: string; content: string }>; max_tokens?: number; temperature?: number }> = {
  name: "private_completion",
  title: "Private chat completion",
  description:
    "Asks a model through the Privacy Relay gateway without revealing personal data: the messages are tokenised on this device (personal data replaced by aliases), attested, relayed, and the answer comes back with the originals restored here. The result includes the gateway's signed receipt and whether it verified offline. Use list_models for model ids (e.g. local-chat).",
  input: z.strictObject({
    model: z.string().min(1).describe("A model id from list_models."),
    messages: z.array(chatMessage).min(1).max(256).describe("The conversation, OpenAI chat format, text content."),
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    temperature: z.number().min(0).max(2).optional()
  }),
  output: z.looseObject({ content: z.string(), model: z.string(), finish_reason: z.string().nullable(), usage: z.unknown(), ...relayMeta }),
  run: async (args, session) => {
    const answer = await (await session.shared.client()).chat.completions.create({ ...args })
    keepAliases(answer.aliases, session)
    keepReceipt(answer.receipt, session)
    const choice = answer.choices?.[0]
    const content = restoreSessionAliases(typeof choice?.message?.content === "string" ? choice.message.content : "", session)
    const structured = { content, model: answer.model ?? args.model, finish_reason: choice?.finish_reason ?? null, usage: answer.usage ?? null, ...metaOf(answer) }
    return ok(structured, `${content}\n\n[receipt ${answer.receipt?.jti ?? "none"}: ${answer.receiptVerified === true ? "verified" : answer.receiptVerified === false ? "NOT verified" : "not issued"}]`)
  }
}

const messagesMessage = z.strictObject({ role: z.enum(["user", "assistant"]), content: z.string().max(1_000_000) })

const privateMessages: ToolDefinition<{ model: string; max_tokens: number; messages: Array<{ role: string; content: string }>; system?: string; temperature?: number }> = {
  name: "private_messages",
  title: "Private message (Anthropic format)",
  description:
    "Like private_completion, in the Anthropic Messages format (system prompt separate, max_tokens required): tokenised and attested on this device, relayed by the gateway, answered with the originals restored here, with the receipt verified offline.",
  input: z.strictObject({
    model: z.string().min(1).describe("A model id from list_models that serves messages (e.g. local-chat)."),
    max_tokens: z.number().int().min(1).max(1_000_000),
    messages: z.array(messagesMessage).min(1).max(256),
    system: z.string().max(1_000_000).optional(),
    temperature: z.number().min(0).max(1).optional()
  }),
  output: z.looseObject({ content: z.string(), model: z.string(), stop_reason: z.string().nullable(), usage: z.unknown(), ...relayMeta }),
  run: async (args, session) => {
    const answer = await (await session.shared.client()).messages.create({ ...args })
    keepAliases(answer.aliases, session)
    keepReceipt(answer.receipt, session)
    const text = Array.isArray(answer.content) ? answer.content.filter((b: Json) => b?.type === "text").map((b: Json) => String(b.text)).join("") : ""
    const content = restoreSessionAliases(text, session)
    const structured = { content, model: answer.model ?? args.model, stop_reason: answer.stop_reason ?? null, usage: answer.usage ?? null, ...metaOf(answer) }
    return ok(structured, `${content}\n\n[receipt ${answer.receipt?.jti ?? "none"}: ${answer.receiptVerified === true ? "verified" : answer.receiptVerified === false ? "NOT verified" : "not issued"}]`)
  }
}

const listModels: ToolDefinition<Record<string, never>> = {
  name: "list_models",
  title: "List models",
  description: "Lists the models this gateway key may use (ids to pass to private_completion and private_messages).",
  input: z.strictObject({}),
  output: z.looseObject({ models: z.array(z.looseObject({ id: z.string() })) }),
  run: async (_args, session) => {
    const list = await (await session.shared.client()).models.list()
    const models = Array.isArray(list.data) ? list.data : []
    return ok({ models }, models.map((m: Json) => m.id).join("\n"))
  }
}

const getBalance: ToolDefinition<Record<string, never>> = {
  name: "get_balance",
  title: "Wallet balance",
  description: "The prepaid USD balance of the organisation that owns this gateway key.",
  input: z.strictObject({}),
  output: z.looseObject({ org_id: z.string(), balance_usd: z.string(), balance_micros: z.number() }),
  run: async (_args, session) => {
    const balance = await (await session.shared.client()).rest.self.balance()
    return ok(balance, `Balance: $${balance.balance_usd}`)
  }
}

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 date or instant")

const usageSummary: ToolDefinition<{ from?: string; to?: string }> = {
  name: "usage_summary",
  title: "Usage totals",
  description:
    "Usage of this gateway key's organisation: calls, input and output tokens and the billed USD per model, for a period (default: the last 30 days), plus daily totals.",
  input: z.strictObject({ from: isoDate.optional().describe("Start (inclusive), ISO 8601."), to: isoDate.optional().describe("End (exclusive), ISO 8601.") }),
  output: z.looseObject({ org_id: z.string(), from: z.string(), to: z.string(), totals: z.array(z.looseObject({})), days: z.array(z.looseObject({})) }),
  run: async (args, session) => {
    const usage = await (await session.shared.client()).rest.self.usage(args)
    const days: Array<Json> = Array.isArray(usage.summary) ? usage.summary : []
    const totals = new Map<string, { provider: string; model: string; calls: number; input_tokens: number; output_tokens: number; billed_micros: number }>()
    for (const d of days) {
      const key = `${d.provider}/${d.model}`
      const row = totals.get(key) ?? { provider: d.provider, model: d.model, calls: 0, input_tokens: 0, output_tokens: 0, billed_micros: 0 }
      row.calls += d.calls
      row.input_tokens += d.input_tokens
      row.output_tokens += d.output_tokens
      row.billed_micros += d.billed_micros
      totals.set(key, row)
    }
    const rows = [...totals.values()].map((r) => ({ ...r, billed_usd: (r.billed_micros / 1_000_000).toFixed(6) }))
    const structured = { org_id: usage.org_id, from: usage.from, to: usage.to, totals: rows, days }
    const text = rows.length === 0 ? `No usage from ${usage.from} to ${usage.to}.` : rows.map((r) => `${r.provider}/${r.model}: ${r.calls} calls, ${r.input_tokens}+${r.output_tokens} tokens, $${r.billed_usd}`).join("\n")
    return ok(structured, text)
  }
}

const keyScopes: ToolDefinition<Record<string, never>> = {
  name: "key_scopes",
  title: "This key's scopes",
  description:
    "What this gateway key may do: its scopes (`permissions`; empty = every scope), the scope vocabulary (`scopes`: messages, completions, buffer, each with its meaning, the routes it allows and whether this key holds it), its model allowlist (null = every model), its tier and organisation.",
  input: z.strictObject({}),
  output: z.looseObject({
    key_prefix: z.string(),
    org_id: z.string(),
    permissions: z.array(z.string()),
    models: z.array(z.string()).nullable(),
    tier: z.string(),
    scopes: z.array(z.looseObject({ name: z.string(), description: z.string(), routes: z.array(z.string()), granted: z.boolean() }))
  }),
  run: async (_args, session) => {
    const client = await session.shared.client()
    const [key, vocabulary] = await Promise.all([client.rest.self.key(), client.rest.keys.vocabulary()])
    // Empty or null permissions mean every scope (docs/keys.md).
    const all = key.permissions.length === 0
    const scopes = vocabulary.scopes.map((s) => ({ ...s, granted: all || key.permissions.includes(s.name) }))
    const structured = { ...key, scopes }
    const text = [
      `${key.key_prefix} (${key.tier}, ${key.org_id}): ${all ? "every scope (no scopes set)" : `scopes ${key.permissions.join(", ")}`}; models ${key.models === null ? "all" : key.models.join(", ")}`,
      ...scopes.map((s) => `${s.granted ? "[x]" : "[ ]"} ${s.name}: ${s.routes.length === 0 ? "no route requires it" : s.routes.join(", ")} (${s.description})`)
    ].join("\n")
    return ok(structured, text)
  }
}

interface ListPrice {
  readonly inputUsdPerMTok: number
  readonly outputUsdPerMTok: number
}

/**
 * The list prices of the models this key can call, from the gateway's model list (`GET /api/v1/models`), keyed
 * `provider/model`; empty when the gateway does not answer (the meter then says the cost is unknown).
 */
const listPrices = async (session: SessionContext): Promise<ReadonlyMap<string, ListPrice>> => {
  try {
    const list = await (await session.shared.client()).models.list()
    const prices = new Map<string, ListPrice>()
    for (const entry of (Array.isArray(list.data) ? list.data : []) as Array<Json>) {
      if (typeof entry.provider !== "string" || typeof entry.id !== "string") continue
      // A model a provider earlier in the catalogue also offers is listed as provider/model.
      const model = entry.id.startsWith(`${entry.provider}/`) ? entry.id.slice(entry.provider.length + 1) : entry.id
      prices.set(`${entry.provider}/${model}`, { inputUsdPerMTok: Number(entry.input_usd_per_mtok), outputUsdPerMTok: Number(entry.output_usd_per_mtok) })
    }
    return prices
  } catch {
    return new Map()
  }
}

/** List price of a call (USD per million tokens, so micro-USD per token), or null when the model is not listed. */
const listPriceMicros = (receipt: Receipt, prices: ReadonlyMap<string, ListPrice>): number | null => {
  const price = prices.get(`${receipt.provider}/${receipt.model}`)
  if (price === undefined || !Number.isFinite(price.inputUsdPerMTok) || !Number.isFinite(price.outputUsdPerMTok)) return null
  return price.inputUsdPerMTok * Number(receipt.input_tokens ?? 0) + price.outputUsdPerMTok * Number(receipt.output_tokens ?? 0)
}

const meter: ToolDefinition<Record<string, never>> = {
  name: "meter",
  title: "This session's meter",
  description:
    "Calls, tokens and estimated cost of the private_* calls made in this MCP session, summed from the signed receipts they returned (cost at the list prices of the gateway's model list, before any markup; get_balance shows what was actually debited).",
  input: z.strictObject({}),
  output: z.looseObject({ calls: z.number(), input_tokens: z.number(), output_tokens: z.number(), list_cost_usd: z.string().nullable(), by_model: z.array(z.looseObject({})) }),
  run: async (_args, session) => {
    const prices = session.received.length === 0 ? new Map<string, ListPrice>() : await listPrices(session)
    const byModel = new Map<string, { model: string; provider: string; calls: number; input_tokens: number; output_tokens: number; micros: number | null }>()
    for (const r of session.received) {
      const key = `${r.provider}/${r.model}`
      const row = byModel.get(key) ?? { model: String(r.model), provider: String(r.provider), calls: 0, input_tokens: 0, output_tokens: 0, micros: 0 }
      row.calls++
      row.input_tokens += Number(r.input_tokens ?? 0)
      row.output_tokens += Number(r.output_tokens ?? 0)
      const price = listPriceMicros(r, prices)
      row.micros = row.micros === null || price === null ? null : row.micros + price
      byModel.set(key, row)
    }
    const rows = [...byModel.values()]
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + f(r), 0)
    const micros = rows.some((r) => r.micros === null) ? null : sum((r) => r.micros ?? 0)
    const usd = (m: number | null) => (m === null ? null : (m / 1_000_000).toFixed(6))
    const structured = {
      calls: sum((r) => r.calls),
      input_tokens: sum((r) => r.input_tokens),
      output_tokens: sum((r) => r.output_tokens),
      list_cost_usd: usd(micros),
      by_model: rows.map(({ micros: m, ...r }) => ({ ...r, list_cost_usd: usd(m) }))
    }
    return ok(structured, `${structured.calls} calls, ${structured.input_tokens} input + ${structured.output_tokens} output tokens, list cost ${structured.list_cost_usd === null ? "unknown" : `$${structured.list_cost_usd}`}`)
  }
}

export const gatewayTools: ReadonlyArray<ToolDefinition> = [privateCompletion, privateMessages, listModels, getBalance, usageSummary, keyScopes, meter]
