// The gateway program under Deno, not only its /healthz: `deno run programs/gateway.ts` (a child process on
// 127.0.0.1, this run's storage: PGlite on disk, or PostgreSQL + Redis reached through DATABASE_URL_FILE and
// REDIS_URL_FILE) relays the SDK's attested calls, non-streamed and streamed, to the fake provider (in this Node
// process); the receipts verify with the SDK's wire verifiers (signature against the published JWKS, chain link from
// the first to the second); the receipt.signed webhooks reach a receiver here with a valid v1 signature; and the
// SDK itself, run by Deno, makes a private call against the Deno gateway. A missing Deno binary fails the file.
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { RelayClient } from "../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { envelopeHash } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { keyResolverFromJwks } from "../../sdks/typescript/src/wire/receipts/jwks.ts"
import { verifyReceipt } from "../../sdks/typescript/src/wire/receipts/verify.ts"
import { verifyV1 } from "../../sdks/typescript/src/wire/webhooks/receiver.ts"
import { keyPrefixOf, newPortalToken } from "../../src/keys/format.ts"
import { startReceiver, type Receiver, waitFor } from "../layers/webhookTestKit.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { DENO, type GatewayProcess, startGatewayProcess, stopGatewayProcess } from "../support/gatewayProcess.ts"
import pgSimpleQuery from "../support/pgSimpleQuery.ts"

const REPO = join(import.meta.dirname, "../..")
const SDK = pathToFileURL(join(REPO, "sdks/typescript/src/index.ts")).href
const EMAIL = "jane.doe@example.com"
const PROMPT = `Write to ${EMAIL} about the invoice.`

let storage: TestStorage
let provider: FakeProvider
let receiver: Receiver
let gateway: GatewayProcess
let dir: string
let adminToken: string

/** With PostgreSQL there is no bootstrap admin token file: an operator token is written straight into the database. */
const seedAdminToken = async (databaseUrl: string) => {
  const token = newPortalToken()
  const org = `org_deno_${crypto.randomUUID().slice(0, 8)}`
  await pgSimpleQuery(databaseUrl, `INSERT INTO organisations (id, name) VALUES ('${org}', 'operator')`)
  await pgSimpleQuery(
    databaseUrl,
    `INSERT INTO portal_tokens (id, org_id, token_hash, token_prefix, abilities) VALUES ('ptk_deno_${org}', '${org}', ` +
      `'${createHash("sha256").update(token).digest("hex")}', '${keyPrefixOf(token)}', '["ability:admin"]')`
  )
  return token
}

const admin = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = await res.json()
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** A self-service key from its own pretend network, credited through the admin API, and a portal token for its org. */
let networks = 0
const tenant = async () => {
  networks++
  const issued = await fetch(`${gateway.url}/api/v1/self-service/key`, { method: "POST", headers: { "x-forwarded-for": `198.19.7.${networks}` }, body: "{}" })
  expect(issued.status).toBe(201)
  const { api_key, key_prefix } = await issued.json()
  await admin("/api/admin/wallets/credit", { key_prefix, usd: "5" })
  const { token } = await admin("/api/admin/portal-tokens", { key_prefix, abilities: "webhooks.manage,webhooks.read,ability:keys.read" })
  const keyFile = join(dir, `key-${networks}`)
  writeFileSync(keyFile, `${api_key}\n`, { mode: 0o600 })
  return { apiKey: api_key as string, keyPrefix: key_prefix as string, portalToken: token as string, keyFile }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pr-deno-gateway-"))
  storage = await createTestStorage()
  provider = await startFakeProvider({ port: 0, streamPieceChars: 3 })
  receiver = await startReceiver()
  const env: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    TRACE_SAMPLE_RATIO: "0",
    TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1,::1",
    PAYMENTS_PROVIDER: "dev",
    LOCAL_PROVIDER_URL: provider.url,
    WEBHOOK_ALLOW_LOOPBACK: "1",
    WEBHOOK_POLL_MS: "100",
    DATA_DIR: join(dir, "data"),
    // The URLs reach the Deno process as files, as a production secret mount gives them.
    DATABASE_URL: "",
    REDIS_URL: ""
  }
  for (const [name, value] of Object.entries(storage.env)) {
    if (name === "DATA_DIR") continue
    if (name === "DATABASE_URL" || name === "REDIS_URL") {
      writeFileSync(join(dir, name), `${value}\n`, { mode: 0o600 })
      env[`${name}_FILE`] = join(dir, name)
    } else env[name] = value
  }
  gateway = await startGatewayProcess(env, "deno")
  adminToken = storage.mode.sql === "postgres"
    ? await seedAdminToken(storage.env.DATABASE_URL!)
    : readFileSync(join(dir, "data", "admin-token"), "utf8").trim()
}, 180_000)

afterAll(async () => {
  await stopGatewayProcess(gateway)
  await receiver?.close()
  await provider?.close()
  await storage?.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe("the gateway under Deno", () => {
  it("is a Deno process listening on 127.0.0.1, healthy", async () => {
    expect(gateway.child.spawnfile).toBe(DENO)
    expect(new URL(gateway.url).hostname).toBe("127.0.0.1")
    const health = await fetch(`${gateway.url}/healthz`)
    expect(health.status).toBe(200)
  })

  it("relays the SDK's attested calls (non-streamed, streamed): originals back, aliases upstream, receipts chained and signed, receipt.signed webhooks signed", async () => {
    const { apiKey, portalToken } = await tenant()
    const rest = new RelayClient({ gatewayUrl: gateway.url, portalToken, nameModel: "off" }).rest
    const endpoint = await rest.webhooks.endpoints.create({ url: receiver.url, events: ["receipt.signed"] }) as { id: number; secret: string }
    expect(endpoint.secret).toMatch(/\S{16,}/)

    const client = new RelayClient({ gatewayUrl: gateway.url, apiKey, nameModel: "off", deviceKey: await generateSigningKeyPair() })
    const messages = [{ role: "user" as const, content: PROMPT }]
    const answer = await client.chat.completions.create({ model: "local-chat", messages })
    const stream = await client.chat.completions.create({ model: "local-chat", messages, stream: true })
    let streamed = ""
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? ""

    expect(answer.choices[0]!.message.content).toBe(`Echo: ${PROMPT}`)
    expect(streamed).toBe(`Echo: ${PROMPT}`)
    expect(provider.received).toHaveLength(2)
    for (const call of provider.received) {
      expect(call.body.toString("utf8")).not.toContain(EMAIL)
      expect(call.body.toString("utf8")).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    }

    // The receipts, checked here with the wire verifiers against the JWKS the Deno gateway publishes.
    const jwks = await (await fetch(`${gateway.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
    const resolveKey = keyResolverFromJwks(jwks)
    const first = answer.receipt!
    const second = stream.receipt!
    const nowSeconds = Math.floor(Date.now() / 1000)
    const one = await verifyReceipt(first, { resolveKey, nowSeconds })
    const two = await verifyReceipt(second, { resolveKey, nowSeconds, previous: first })
    expect(one).toMatchObject({ valid: true, reason: null })
    expect(two).toMatchObject({ valid: true, reason: null })
    expect(two.checks.map((c) => c.status)).toEqual(["ok", "ok", "ok", "ok", "ok"])
    expect((second.chain as { seq: number; prev_hash: string })).toMatchObject({ seq: 2, prev_hash: await envelopeHash(first) })
    // A changed receipt does not verify: the checks can fail.
    const forged = await verifyReceipt({ ...second, output_tokens: 999 }, { resolveKey, nowSeconds, previous: first })
    expect(forged.valid).toBe(false)

    // One receipt.signed delivery per call, each signed under the endpoint's secret.
    const deliveries = await waitFor(() => receiver.received.length >= 2 && receiver.received, 30_000, "two receipt.signed deliveries")
    expect(deliveries.map((d) => d.body.event)).toEqual(["receipt.signed", "receipt.signed"])
    expect(new Set(deliveries.map((d) => d.body.data.jti))).toEqual(new Set([first.jti, second.jti]))
    for (const delivery of deliveries) {
      const header = delivery.headers["x-service-signature"] as string
      expect(await verifyV1({ header, rawBody: delivery.rawBody, secret: endpoint.secret, nowSeconds: Math.floor(Date.now() / 1000) })).toEqual({ ok: true })
      expect(await verifyV1({ header, rawBody: delivery.rawBody, secret: "whsec_not_the_secret", nowSeconds: Math.floor(Date.now() / 1000) }))
        .toEqual({ ok: false, reason: "signature_mismatch" })
    }
  }, 60_000)

  it("serves the SDK run by Deno itself: a private streamed and non-streamed call, receipts verified by the SDK", async () => {
    const { keyFile } = await tenant()
    provider.reset()
    const configDir = join(dir, "sdk-config")
    mkdirSync(configDir, { recursive: true, mode: 0o700 })
    writeFileSync(
      join(dir, "sdk.ts"),
      `import { RelayClient } from ${JSON.stringify(SDK)}
const client = new RelayClient({ gatewayUrl: Deno.env.get("GATEWAY_URL")!, apiKeyFile: Deno.env.get("GATEWAY_KEY_FILE")!, nameModel: "off" })
const messages = [{ role: "user", content: ${JSON.stringify(PROMPT)} }]
const answer = await client.chat.completions.create({ model: "local-chat", messages })
const stream = await client.chat.completions.create({ model: "local-chat", stream: true, messages })
let streamed = ""
for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? ""
console.log(JSON.stringify({ content: answer.choices[0].message.content, verified: answer.receiptVerified, streamed, streamVerified: stream.receiptVerified }))
`
    )
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(DENO, ["run", "--config", join(REPO, "deno.json"), "--allow-net=127.0.0.1", "--allow-env", "--allow-read", `--allow-write=${configDir}`, join(dir, "sdk.ts")], {
        cwd: REPO,
        env: { PATH: process.env.PATH ?? "", HOME: dir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", PRIVACY_RELAY_CONFIG_DIR: configDir, GATEWAY_URL: gateway.url, GATEWAY_KEY_FILE: keyFile }
      }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })))
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout.trim())).toEqual({ content: `Echo: ${PROMPT}`, verified: true, streamed: `Echo: ${PROMPT}`, streamVerified: true })
    expect(provider.received).toHaveLength(2)
    expect(provider.received.map((r) => r.body.toString("utf8")).join("\n")).not.toContain(EMAIL)
  }, 120_000)
})
