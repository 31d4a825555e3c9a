import OpenAI from "openai"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { attestingFetch } from "../../support/engine.ts"
import { startTestGateway } from "../../support/gateway.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

interface Listed { readonly id: string; readonly provider: string; readonly available: boolean }

const listModels = async (authorization?: string, query = "") => {
  const res = await fetch(`${fx.gw.url}/api/v1/models${query}`, { headers: authorization === undefined ? {} : { authorization } })
  const json = await res.json()
  return { status: res.status, json, ids: res.status === 200 ? (json.data as Array<Listed>).map((m) => m.id) : [] }
}

const OUT_OF_THE_BOX = ["local-chat", "local-embed", "local-economy/local-chat"]

const storeByokKey = async (orgId: string, provider: string) => {
  const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: ["ability:byok.write"] }))
  const res = await fetch(`${fx.gw.url}/api/v1/byok/${provider}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ api_key: "sk-byok-models-0123456789" })
  })
  expect(res.status).toBe(200)
}

describe("GET /api/v1/models lists only what the caller can call", () => {
  it("with only the built-in local provider configured: the local models, with prices, for a key and without one", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    for (const auth of [undefined, `Bearer ${apiKey}`]) {
      const { status, json, ids } = await listModels(auth)
      expect(status).toBe(200)
      expect(json.object).toBe("list")
      expect(ids).toEqual(OUT_OF_THE_BOX)
      expect(json.data[0]).toMatchObject({
        id: "local-chat",
        object: "model",
        provider: "local",
        input_usd_per_mtok: "1.00",
        output_usd_per_mtok: "2.00",
        available: true
      })
    }
  })

  it("after the organisation stores a BYOK key, that provider's models appear for its keys only", async () => {
    const a = await fundedKey(fx.gw)
    const b = await fundedKey(fx.gw)
    await storeByokKey(a.orgId, "deepseek")
    const listedA = await listModels(`Bearer ${a.apiKey}`)
    expect(listedA.ids.slice(0, 3)).toEqual(OUT_OF_THE_BOX)
    const deepseek = (listedA.json.data as Array<Listed>).filter((m) => m.provider === "deepseek")
    expect(deepseek.map((m) => m.id)).toContain("deepseek-chat")
    expect(listedA.ids).toHaveLength(3 + deepseek.length)
    expect((await listModels(`Bearer ${b.apiKey}`)).ids).toEqual(OUT_OF_THE_BOX)
    expect((await listModels()).ids).toEqual(OUT_OF_THE_BOX)
  })

  it("respects the key's model allowlist", async () => {
    const { orgId } = await fundedKey(fx.gw)
    const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: ["ability:keys.write"] }))
    const created = await fetch(`${fx.gw.url}/api/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "embed only", models: ["local-embed"] })
    })
    expect(created.status).toBe(201)
    expect((await listModels(`Bearer ${(await created.json()).api_key}`)).ids).toEqual(["local-embed"])
  })

  it("?include=unavailable lists the whole catalogue, marking what this key cannot call", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const { status, json } = await listModels(`Bearer ${apiKey}`, "?include=unavailable")
    expect(status).toBe(200)
    const data = json.data as Array<Listed>
    expect(data.length).toBeGreaterThan(40)
    expect(new Set(data.map((m) => m.provider)).size).toBe(14) // twelve real providers plus local and local-economy
    expect(new Set(data.map((m) => m.id)).size).toBe(data.length)
    expect(data.filter((m) => m.available).map((m) => m.id)).toEqual(OUT_OF_THE_BOX)
    expect(data.find((m) => m.id === "gpt-4o")).toMatchObject({ provider: "openai", available: false })
    expect(data.find((m) => m.id === "azure-openai/gpt-4o")).toMatchObject({ provider: "azure-openai", available: false })
  })

  it("refuses a bad key (401 invalid_key) and an unknown include value (400 invalid_request)", async () => {
    const bad = await listModels("Bearer svc_notakey")
    expect(bad.status).toBe(401)
    expect(bad.json.error.code).toBe("invalid_key")
    const include = await listModels(undefined, "?include=everything")
    expect(include.status).toBe(400)
    expect(include.json.error).toMatchObject({ code: "invalid_request", details: { path: "include" } })
  })

  it("lists a pooled provider once the gateway has its key file", async () => {
    const keyFile = join(mkdtempSync(join(tmpdir(), "pr-models-")), "openai-key")
    writeFileSync(keyFile, "sk-pooled-test-key\n", { mode: 0o600 })
    const gw = await startTestGateway({ LOCAL_PROVIDER_URL: fx.provider.url, PROVIDER_OPENAI_API_KEY_FILE: keyFile })
    try {
      const json = await (await fetch(`${gw.url}/api/v1/models`)).json()
      const ids = (json.data as Array<Listed>).map((m) => m.id)
      expect(ids).toContain("gpt-4o")
      expect(ids).not.toContain("deepseek-chat") // BYOK-only
      expect(new Set((json.data as Array<Listed>).map((m) => m.provider))).toEqual(new Set(["local", "local-economy", "openai"]))
    } finally {
      await gw.close()
    }
  })
})

describe("calling a model whose provider is not configured", () => {
  it("answers 400 provider_not_configured once: the official openai SDK (default retries) sends exactly one request", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const sent: Array<string> = []
    const signing = attestingFetch("chat.completions")
    const counting: typeof fetch = (input, init) => {
      sent.push(String(input instanceof Request ? input.url : input))
      return signing(input, init)
    }
    // Default maxRetries (2): the SDK retries 408, 409, 429 and >= 500, so a 503 here would arrive three times.
    const openai = new OpenAI({ apiKey, baseURL: `${fx.gw.url}/api/v1`, fetch: counting })
    const error = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Hi <PERSON_1>" }] })
      .then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>
    expect(apiError.status).toBe(400)
    expect(apiError.code).toBe("provider_not_configured")
    expect(sent).toEqual([`${fx.gw.url}/api/v1/chat/completions`])
    expect(fx.provider.received).toHaveLength(0)
  })

})
