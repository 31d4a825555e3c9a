/**
 * Issue 31's leaks, each as a regression test through the clients users run, with the official `openai` and
 * `@anthropic-ai/sdk` packages unmodified: the local proxy (programs' startProxy, worker tokeniser, built-in names) and
 * `client.fetch` of the TypeScript SDK (no proxy). The fake provider is the outside world: it must never receive an
 * original value; a refused call reaches neither the gateway nor the provider and nothing is debited.
 */
import Anthropic from "@anthropic-ai/sdk"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { RelayClient } from "../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { startProxy, type StartedProxy } from "../../sdks/typescript/src/proxy/startProxy.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 4 })

const EMAIL = "maria.lopez@example.org"
const NAME = "Maria Lopez"
const PHONE = "+44 20 7946 0958"
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
const ORIGINALS = [EMAIL, NAME, PHONE, "maria_l", PNG]

let dir: string
let apiKey: string
let strictProxy: StartedProxy
let openProxy: StartedProxy
let relay: RelayClient

const upstream = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
const expectNoOriginalUpstream = () => {
  const seen = upstream()
  for (const value of ORIGINALS) expect(seen).not.toContain(value)
}

const startAProxy = async (name: string, extra: Record<string, string>) => {
  const keyFile = join(dir, `${name}-key`)
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 })
  chmodSync(keyFile, 0o600)
  return startProxy({
    PROXY_HOST: "127.0.0.1",
    PROXY_PORT: "0",
    GATEWAY_URL: fx.gw.url,
    GATEWAY_KEY_FILE: keyFile,
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
    NAME_MODEL: "builtin",
    ...extra
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "egress-e2e-"))
  process.env.PRIVACY_RELAY_CONFIG_DIR = join(dir, "sdk-config")
  apiKey = (await fundedKey(fx.gw)).apiKey
  strictProxy = await startAProxy("strict", {})
  openProxy = await startAProxy("open", { MEDIA_POLICY: "pass", PASSTHROUGH_PATHS: "/x_trace" })
  relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey: await generateSigningKeyPair() })
})
afterAll(async () => {
  await strictProxy?.close()
  await openProxy?.close()
  rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => fx.provider.reset())

const clients = {
  proxy: {
    openai: () => new OpenAI({ apiKey: "unused", baseURL: `${strictProxy.url}/v1`, maxRetries: 0 }),
    anthropic: () => new Anthropic({ apiKey: "unused", baseURL: strictProxy.url, maxRetries: 0 })
  },
  "client.fetch": {
    openai: () => new OpenAI({ apiKey: "unused", baseURL: "https://relay.invalid/v1", fetch: relay.fetch, maxRetries: 0 }),
    anthropic: () => new Anthropic({ apiKey: "unused", baseURL: "https://relay.invalid", fetch: relay.fetch, maxRetries: 0 })
  }
} as const

for (const [via, make] of Object.entries(clients)) {
  describe(`the egress policy through ${via} (official SDKs)`, () => {
    it("OpenAI user, metadata values and messages[].name reach the provider only as USER_ aliases, the same in every call", async () => {
      const request = {
        model: "local-chat",
        user: EMAIL,
        metadata: { customer: NAME, phone: PHONE },
        messages: [{ role: "user" as const, name: "maria_l", content: "Hello there" }]
      }
      const first = await make.openai().chat.completions.create(request)
      expect(first.choices[0]!.message.content).toContain("Echo:")
      await make.openai().chat.completions.create(request)
      expectNoOriginalUpstream()
      const [a, b] = fx.provider.received.map((r) => JSON.parse(r.body.toString("utf8")) as { user: string })
      expect(a!.user).toMatch(/^USER_[a-z2-9]{10}$/)
      expect(b!.user).toBe(a!.user)
    })

    it("Anthropic metadata.user_id reaches the provider only as its USER_ alias", async () => {
      await make.anthropic().messages.create({ model: "local-chat", max_tokens: 50, metadata: { user_id: EMAIL }, messages: [{ role: "user", content: "Hi" }] })
      expectNoOriginalUpstream()
      expect(upstream()).toMatch(/USER_[a-z2-9]{10}/)
    })

    it("an image_url data URL is refused 415 unsupported_content naming the part; nothing is sent", async () => {
      const error = await make.openai().chat.completions.create({
        model: "local-chat",
        messages: [{ role: "user", content: [{ type: "text", text: "Read this" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }]
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(415)
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "unsupported_content", details: { path: "/messages/0/content/1", kind: "image" } })
      expect(fx.provider.received).toHaveLength(0)
    })

    it("an Anthropic image block is refused 415 with Anthropic's error shape; nothing is sent", async () => {
      const error = await make.anthropic().messages.create({
        model: "local-chat",
        max_tokens: 50,
        messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] }]
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Anthropic.APIError)
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(415)
      expect(JSON.stringify((error as InstanceType<typeof Anthropic.APIError>).error)).toContain("/messages/0/content/0/source")
      expect(fx.provider.received).toHaveLength(0)
    })

    it("a field and a part type invented for the test are refused 400 unsupported_field; nothing is sent", async () => {
      const field = await make.openai().chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "Hi" }], x_trace: EMAIL } as never).catch((e: unknown) => e)
      expect((field as InstanceType<typeof OpenAI.APIError>).status).toBe(400)
      expect((field as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "unsupported_field", details: { path: "/x_trace", setting: "PASSTHROUGH_PATHS" } })
      const part = await make.openai().chat.completions.create({
        model: "local-chat",
        messages: [{ role: "user", content: [{ type: "hologram", data: EMAIL }] }]
      } as never).catch((e: unknown) => e)
      expect((part as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: "unsupported_field", details: { path: "/messages/0/content/0" } })
      expect(JSON.stringify(part)).not.toContain(EMAIL)
      expect(fx.provider.received).toHaveLength(0)
    })
  })
}

describe("opt-ins through the proxy: MEDIA_POLICY=pass and PASSTHROUGH_PATHS", () => {
  it("sends what they name, declares it in the attestation, and the gateway accepts it (receipt countersigned)", async () => {
    const openai = new OpenAI({ apiKey: "unused", baseURL: `${openProxy.url}/v1`, maxRetries: 0 })
    const { data, response } = await openai.chat.completions
      .create({
        model: "local-chat",
        x_trace: "ticket-42",
        messages: [{ role: "user", content: [{ type: "text", text: `Describe it for ${EMAIL}` }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }]
      } as never)
      .withResponse()
    expect(response.status).toBe(200)
    expect((data as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toContain(EMAIL)
    const sent = upstream()
    expect(sent).toContain(PNG)
    expect(sent).toContain("ticket-42")
    expect(sent).not.toContain(EMAIL)
    expect(response.headers.get("x-service-receipt-v2")).toBeTruthy()
  })
})

describe("the gateway's own check (defence in depth)", () => {
  it("refuses a relayed body carrying an undeclared image or an unknown field: 400 egress_policy_violation, nothing forwarded, nothing debited", async () => {
    const { attestedHeaders } = await import("../support/engine.ts")
    const { apiKey: key, orgId } = await fundedKey(fx.gw)
    const before = await balanceMicros(fx.gw, orgId)
    for (const [body, path] of [
      [{ model: "local-chat", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }] }, "/messages/0/content/0"],
      [{ model: "local-chat", messages: [{ role: "user", content: "Hi" }], x_unlisted: "a" }, "/x_unlisted"]
    ] as const) {
      const text = JSON.stringify(body)
      const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", text, { passthrough: [] })) },
        body: text
      })
      expect(res.status).toBe(400)
      expect((await res.json()).error).toMatchObject({ code: "egress_policy_violation", details: { path } })
    }
    expect(fx.provider.received).toHaveLength(0)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before)
  })
})
