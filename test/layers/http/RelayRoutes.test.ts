import { describe, expect, it } from "vitest"
import { attestedHeaders, TEST_ENGINE } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"
import { parseServerTiming } from "../../../src/http/serverTiming.ts"

const fx = useRelayFixture({ PROVIDER_LOCAL_TIMEOUT_MS: "1500" })

const chatBody = (content = "Hello <EMAIL_1>", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", messages: [{ role: "user", content }], ...extra })

const post = async (path: string, apiKey: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${fx.gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
    body
  })

const relayChat = async (apiKey: string, body = chatBody(), headers: Record<string, string> = {}) =>
  post("/api/v1/chat/completions", apiKey, body, { ...(await attestedHeaders("chat.completions", body)), ...headers })

describe("POST /api/v1/chat/completions (non-streamed)", () => {
  it("relays the body byte for byte, answers the provider's completion, and meters and debits the call", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    // odd whitespace between tokens and inside strings must reach the provider exactly as sent
    const body = `{ "model":"local-chat",\n  "messages": [ {"role":"user","content":"  spaced   <EMAIL_1>  "} ] }`
    const before = await balanceMicros(fx.gw, orgId)
    const res = await relayChat(apiKey, body, { "x-request-id": "9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b" })
    expect(res.status).toBe(200)
    const json = await res.json()
    expect(json.object).toBe("chat.completion")
    expect(json.choices[0].message.content).toBe("Echo:   spaced   <EMAIL_1>  ")

    expect(fx.provider.received).toHaveLength(1)
    const upstream = fx.provider.received[0]
    expect(upstream.path).toBe("/v1/chat/completions")
    expect(upstream.body.equals(Buffer.from(body))).toBe(true)
    expect(upstream.headers["x-request-id"]).toBe("9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b")
    expect(upstream.headers["authorization"]).toBe("Bearer local")
    // the client's gateway key never travels upstream
    expect(JSON.stringify(upstream.headers)).not.toContain(apiKey)

    const usage = await fx.gw.query<Record<string, unknown>>("SELECT * FROM usage_records WHERE org_id = $1", orgId)
    expect(usage).toHaveLength(1)
    expect(usage[0].request_id).toBe(json.id)
    expect(usage[0].gateway_request_id).toBe("9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b")
    expect(usage[0].input_tokens).toBe(json.usage.prompt_tokens)
    expect(usage[0].output_tokens).toBe(json.usage.completion_tokens)
    expect(usage[0].key_mode).toBe("pooled")
    const billed = BigInt(String(usage[0].billed_micros))
    expect(billed).toBeGreaterThan(0n)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before - billed)
    const held = await fx.gw.query<{ h: string }>("SELECT held_micros::text AS h FROM wallets WHERE org_id = $1", orgId)
    expect(held).toEqual([{ h: "0" }])
    expect(await fx.gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("continues the caller's trace: traceparent upstream and on the response carry the same trace id", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const res = await relayChat(apiKey, chatBody(), { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
    expect(res.status).toBe(200)
    expect(res.headers.get("traceparent")).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(String(fx.provider.received[0].headers["traceparent"])).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  })
})

describe("engines of the official SDKs", () => {
  it("relays a request attested by the Python engine relay-py 0.1.0 (its first version) and forwards it byte for byte", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = chatBody("Python says <EMAIL_1>")
    const headers = await attestedHeaders("chat.completions", body, { engine: { id: "relay-py", version: "0.1.0", sha256: "b".repeat(64) } })
    expect(headers["x-service-engine"]).toBe("relay-py/0.1.0")
    const res = await post("/api/v1/chat/completions", apiKey, body, headers)
    expect(res.status).toBe(200)
    expect((await res.json()).choices[0].message.content).toBe("Echo: Python says <EMAIL_1>")
    expect(fx.provider.received).toHaveLength(1)
    expect(fx.provider.received[0].body.equals(Buffer.from(body))).toBe(true)
  })
})

describe("fail-closed: a request not tokenised by an official engine is refused and nothing is forwarded", () => {
  const cases: Array<[string, number, string, (body: string) => Promise<Record<string, string>>]> = [
    ["no engine header", 403, "engine_untrusted", async (b) => {
      const h = await attestedHeaders("chat.completions", b)
      return { "x-service-attestation": h["x-service-attestation"] }
    }],
    ["an unknown engine", 403, "engine_untrusted", async (b) => ({ ...(await attestedHeaders("chat.completions", b)), "x-service-engine": "homebrew/9.9.9" })],
    ["an engine older than the minimum", 403, "engine_untrusted", (b) =>
      attestedHeaders("chat.completions", b, { engine: { ...TEST_ENGINE, version: "0.0.9" } })],
    ["no attestation", 428, "pretokenised_required", async () => ({ "x-service-engine": "relay-ts/0.1.0" })],
    ["a bad signature", 428, "pretokenised_required", async (b) => {
      const h = await attestedHeaders("chat.completions", b)
      const env = JSON.parse(Buffer.from(h["x-service-attestation"], "base64").toString())
      env.sig = env.sig.slice(0, -4) + (env.sig.endsWith("AAAA") ? "BBBB" : "AAAA")
      return { ...h, "x-service-attestation": Buffer.from(JSON.stringify(env)).toString("base64") }
    }],
    ["a body changed after signing", 428, "pretokenised_required", (b) => attestedHeaders("chat.completions", b.replace("Hello", "Hallo"))],
    ["a stale iat", 428, "pretokenised_required", (b) => attestedHeaders("chat.completions", b, { now: new Date(Date.now() - 301_000) })],
    ["an attestation for another route", 428, "pretokenised_required", (b) => attestedHeaders("messages", b)],
    ["an engine header that differs from the attested engine", 428, "pretokenised_required", (b) =>
      attestedHeaders("chat.completions", b, { engineHeader: "relay-ts/0.2.0" })]
  ]
  it.each(cases)("%s -> %i %s", async (_label, status, code, makeHeaders) => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = chatBody()
    const before = await balanceMicros(fx.gw, orgId)
    const res = await post("/api/v1/chat/completions", apiKey, body, await makeHeaders(body))
    expect(res.status).toBe(status)
    const json = await res.json()
    expect(json.error.code).toBe(code)
    expect(json.error.message).not.toContain("EMAIL_1")
    expect(fx.provider.received).toHaveLength(0)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before)
    expect(await fx.gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId)).toHaveLength(0)
  })
})

describe("relay admission", () => {
  it("answers 402 insufficient_balance for an empty wallet and forwards nothing", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw, "0")
    const res = await relayChat(apiKey)
    expect(res.status).toBe(402)
    expect(await res.json()).toEqual({
      error: {
        code: "insufficient_balance",
        message: "The wallet balance is not positive (or fully reserved by calls in flight). Top up to relay calls."
      }
    })
    expect(fx.provider.received).toHaveLength(0)
    expect(await fx.gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("answers 404 model_not_found for a model outside the catalogue, before any upstream call", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody("x", { model: "no-such-model" }))
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe("model_not_found")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("answers the router's refusals with their envelope and a failed-call receipt, forwarding and debiting nothing", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    // A key restricted to another model before its first call: a key already used is cached by the gateway, and on
    // PostgreSQL the cache hears of the change by NOTIFY, which may come after the next request (a race, not a check).
    const restricted = await fundedKey(fx.gw)
    await fx.gw.query(`UPDATE api_keys SET models = '["some-other-model"]'::jsonb WHERE key_prefix = $1`, restricted.keyPrefix)
    const before = await balanceMicros(fx.gw, orgId)
    const restrictedBefore = await balanceMicros(fx.gw, restricted.orgId)
    const refusal = async (body: string, headers: Record<string, string> = {}, key = apiKey) => {
      const res = await relayChat(key, body, headers)
      const failed = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-failed")!, "base64").toString())
      return { status: res.status, body: await res.json(), failed: { status: failed.status, error_code: failed.error_code } }
    }
    expect(await refusal(chatBody("x", { model: "no-such-model" }))).toEqual({
      status: 404,
      body: { error: { code: "model_not_found", message: "Model \"no-such-model\" is not in the catalogue (GET /api/v1/models?include=unavailable lists it)." } },
      failed: { status: 404, error_code: "model_not_found" }
    })
    expect(await refusal(chatBody("x", { model: "local-embed" }))).toEqual({
      status: 404,
      body: { error: { code: "model_not_found", message: "Model \"local-embed\" does not serve this route." } },
      failed: { status: 404, error_code: "model_not_found" }
    })
    expect(await refusal(chatBody("x", { model: "gpt-4o" }))).toEqual({
      status: 400,
      body: {
        error: {
          code: "provider_not_configured",
          message: "Provider \"openai\" is not configured for this organisation: the gateway has no pooled key or base URL for it " +
            "and no own key is stored (PUT /api/v1/byok/openai). GET /api/v1/models lists the models this key can call."
        }
      },
      failed: { status: 400, error_code: "provider_not_configured" }
    })
    expect(await refusal(chatBody(), { "x-service-routing": "cheapest-please" })).toEqual({
      status: 400,
      body: {
        error: {
          code: "invalid_request",
          message: "Unknown routing strategy \"cheapest-please\" in X-Service-Routing (use \"cost\" or \"off\").",
          details: { path: "x-service-routing" }
        }
      },
      failed: { status: 400, error_code: "invalid_request" }
    })
    expect(await refusal(chatBody(), {}, restricted.apiKey)).toEqual({
      status: 403,
      body: { error: { code: "model_not_allowed", message: "This key may not use model \"local-chat\".", allowed: ["some-other-model"] } },
      failed: { status: 403, error_code: "model_not_allowed" }
    })
    expect(fx.provider.received).toHaveLength(0)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before)
    expect(await balanceMicros(fx.gw, restricted.orgId)).toBe(restrictedBefore)
    expect(await fx.gw.query("SELECT 1 FROM usage_records WHERE org_id IN ($1, $2)", orgId, restricted.orgId)).toHaveLength(0)
  })

  it.each([
    ["messages missing", JSON.stringify({ model: "local-chat" }), "messages"],
    ["model not a string", JSON.stringify({ model: 7, messages: [{ role: "user", content: "x" }] }), "model"],
    ["stream not a boolean", JSON.stringify({ model: "local-chat", stream: "yes", messages: [{ role: "user", content: "x" }] }), "stream"]
  ])("answers 400 invalid_request when %s (after the attestation check), forwarding nothing", async (_l, body, path) => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, body)
    expect(res.status).toBe(400)
    const json = await res.json()
    expect(json.error.code).toBe("invalid_request")
    expect(json.error.details.path).toBe(path)
    expect(fx.provider.received).toHaveLength(0)
  })

  it("enforces the free tier's 20 requests per minute per key with 429 rate_limited, Retry-After and RateLimit headers", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    for (let i = 0; i < 20; i++) expect((await relayChat(apiKey)).status).toBe(200)
    const res = await relayChat(apiKey)
    expect(res.status).toBe(429)
    const refused = await res.json()
    expect(refused).toEqual({ error: { code: "rate_limited", message: refused.error.message, limits: ["key"] } })
    expect(refused.error.message).toMatch(/^Rate limit reached \(key\)\. Retry after \d+ s\.$/)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(res.headers.get("ratelimit-policy")).toContain(`"key";q=20;w=60`)
    expect(res.headers.get("ratelimit")).toMatch(/^"key";r=0;t=\d+, "tenant-60s";r=\d+;t=\d+, "tenant-3600s";r=\d+;t=\d+, "tenant-month";r=\d+;t=\d+$/)
    const failed = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ status: 429, error_code: "rate_limited" })
    expect(fx.provider.received).toHaveLength(20)
  })
})

describe("upstream failures", () => {
  it("maps an upstream 500 to 502 upstream_error with the provider status, releases the hold and debits nothing", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const before = await balanceMicros(fx.gw, orgId)
    const res = await relayChat(apiKey, chatBody("x", { model: "local-chat" }), {})
    expect(res.status).toBe(200)
    fx.provider.setBehaviour({ kind: "status", status: 500 })
    const failed = await relayChat(apiKey)
    expect(failed.status).toBe(502)
    const json = await failed.json()
    expect(json.error.code).toBe("upstream_error")
    expect(json.error.provider_status).toBe(500)
    const after = await balanceMicros(fx.gw, orgId)
    const billed = await fx.gw.query<{ b: string }>("SELECT billed_micros::text AS b FROM usage_records WHERE org_id = $1", orgId)
    expect(billed).toHaveLength(1)
    expect(after).toBe(before - BigInt(billed[0].b))
    expect(await fx.gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("answers 504 upstream_timeout when the provider does not answer in time, leaving no open upstream request", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    fx.provider.setBehaviour({ kind: "hang" })
    const res = await relayChat(apiKey)
    expect(res.status).toBe(504)
    expect((await res.json()).error.code).toBe("upstream_timeout")
    await new Promise((r) => setTimeout(r, 100))
    expect(fx.provider.openRequests()).toBe(0)
  })
})

describe("receipts on relayed calls", () => {
  const verifyWithJwks = async (envelope: Record<string, unknown>) => {
    const jwks = await (await fetch(`${fx.gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
    const jwk = jwks.keys.find((k: { kid: string }) => k.kid === envelope.kid)
    expect(jwk).toBeDefined()
    const key = await crypto.subtle.importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"])
    const { sig, signature: _signature, ...unsigned } = envelope
    const { default: canonicalize } = await import("canonicalize")
    return crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      Buffer.from(String(sig), "base64url"),
      new TextEncoder().encode(canonicalize(unsigned)!)
    )
  }

  it("seals a v2 receipt (header), stores the v1 with the same jti, and countersigns the attestation (v3)", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = chatBody("receipt me")
    const res = await relayChat(apiKey, body)
    expect(res.status).toBe(200)
    const completion = await res.json()
    const v2 = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v2")!, "base64").toString())
    expect(v2.v).toBe(2)
    expect(v2.jti).toMatch(/^[0-9a-f]{32}$/)
    expect(res.headers.get("x-service-receipt-v2-jti")).toBe(v2.jti)
    expect(v2.request_id).toBe(completion.id)
    expect(v2.chain.chain_id).toBe(`receipt-v2-org-${orgId}`)
    expect(v2.chain.seq).toBe(1)
    expect(v2.signature).toBe(v2.sig)
    const { createHash } = await import("node:crypto")
    const { default: canonicalize } = await import("canonicalize")
    expect(v2.hash_upstream_request).toBe(createHash("sha256").update(canonicalize(JSON.parse(body))!).digest("hex"))
    expect(await verifyWithJwks(v2)).toBe(true)

    const usage = await fx.gw.query<{ receipt_jti: string }>("SELECT receipt_jti FROM usage_records WHERE org_id = $1", orgId)
    expect(usage).toEqual([{ receipt_jti: v2.jti }])
    const v1 = await fx.gw.query<{ jti: string }>("SELECT jti FROM receipts_v1 WHERE jti = $1", v2.jti)
    expect(v1).toHaveLength(1)

    const v3 = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v3")!, "base64").toString())
    expect(v3).toMatchObject({ v: "v3-countersignature", provider: "local", model: "local-chat", receipt_jti: v2.jti })
    expect(v3.hash_upstream_request).toBe(v2.hash_upstream_request)
    expect(v3.hash_upstream_response).toBe(v2.hash_upstream_response)
    expect(await verifyWithJwks(v3)).toBe(true)

    const second = await relayChat(apiKey, chatBody("and again"))
    const next = JSON.parse(Buffer.from(second.headers.get("x-service-receipt-v2")!, "base64").toString())
    expect(next.chain.seq).toBe(2)
    expect(next.chain.prev_hash).toBe(createHash("sha256").update(canonicalize(v2)!).digest("hex"))
  })

  it("gives a failed authenticated call a signed failed-call receipt in its own chain", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw, "0")
    const res = await relayChat(apiKey)
    expect(res.status).toBe(402)
    const failed = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ outcome: "failed", error_code: "insufficient_balance", status: 402 })
    expect(failed.chain.chain_id).toBe(`failed-v2-org-${orgId}`)
    expect(failed.input_tokens).toBeUndefined()
    expect(await verifyWithJwks(failed)).toBe(true)
  })
})

describe("Server-Timing: where a relay call spent its time", () => {
  const stagesOf = (res: Response) => parseServerTiming(res.headers.get("server-timing"))

  it("a relayed call reports its pipeline stages in order, each non-negative, ending with the total", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey)
    expect(res.status).toBe(200)
    const stages = stagesOf(res)
    expect(stages.map((s) => s.name)).toEqual([
      "auth",
      "attestation",
      "routing",
      "admission",
      "upstream",
      "settle",
      "receipt-headers",
      "total"
    ])
    expect(stages.every((s) => s.ms >= 0)).toBe(true)
    const total = stages.at(-1)!.ms
    const sum = stages.slice(0, -1).reduce((n, s) => n + s.ms, 0)
    expect(sum).toBeLessThanOrEqual(total + 0.01)
  })

  it("with an Idempotency-Key the look-up's remaining wait is a stage of its own, after the checks it overlaps", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody("timed"), { "idempotency-key": crypto.randomUUID() })
    expect(res.status).toBe(200)
    // The look-up overlaps the checks and the admission; what is left of its wait comes after them.
    expect(stagesOf(res).map((s) => s.name)).toEqual(["auth", "attestation", "routing", "admission", "idempotency", "upstream", "settle", "receipt-headers", "total"])
  })

  it("a refused call shows how far it got and the sealing of its failed-call receipt", async () => {
    const { apiKey } = await fundedKey(fx.gw, "0")
    const res = await relayChat(apiKey)
    expect(res.status).toBe(402)
    expect(stagesOf(res).map((s) => s.name)).toEqual(["auth", "attestation", "routing", "admission", "refused", "failed-receipt", "total"])
    expect(fx.provider.received).toHaveLength(0)
  })
})

