// The SDK under Deno: a Deno program imports the SDK source (sdks/typescript/src/index.ts) and makes private calls,
// non-streamed and streamed, to a real gateway run by this test process, with only the permissions the SDK needs:
// network to 127.0.0.1, the environment, reading (its own source, the key file) and writing its config directory
// (the device key). Originals come back, receipts verify, the fake provider sees only aliases.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 3 })
const REPO = join(import.meta.dirname, "../../..")
const DENO = join(REPO, "node_modules", ".bin", "deno")
const SDK = pathToFileURL(join(REPO, "sdks/typescript/src/index.ts")).href

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const PROMPT = `Email ${EMAIL} or call ${PHONE} about the invoice.`

let dir: string
let configDir: string
let keyFile: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pr-sdk-deno-"))
  configDir = join(dir, "config")
  mkdirSync(configDir, { mode: 0o700 })
  keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${(await fundedKey(fx.gw)).apiKey}\n`, { mode: 0o600 })
  writeFileSync(
    join(dir, "main.ts"),
    `import { RelayClient } from ${JSON.stringify(SDK)}
const client = new RelayClient({ gatewayUrl: Deno.env.get("GATEWAY_URL")!, apiKeyFile: Deno.env.get("GATEWAY_KEY_FILE")! })
const messages = [{ role: "user", content: ${JSON.stringify(PROMPT)} }]
const answer = await client.chat.completions.create({ model: "local-chat", messages })
const stream = await client.chat.completions.create({ model: "local-chat", stream: true, messages })
let streamed = ""
for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? ""
console.log(JSON.stringify({
  runtime: "deno " + Deno.version.deno,
  content: answer.choices[0].message.content,
  receiptVerified: answer.receiptVerified,
  tokenised: answer.tokenisedRequest,
  streamed,
  streamReceiptVerified: stream.receiptVerified
}))
`
  )
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const runDeno = (permissions: Array<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(DENO, ["run", "--config", join(REPO, "deno.json"), ...permissions, join(dir, "main.ts")], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        PRIVACY_RELAY_CONFIG_DIR: configDir,
        GATEWAY_URL: fx.gw.url,
        GATEWAY_KEY_FILE: keyFile
      }
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
  )

/** What the SDK needs: the gateway on loopback, the environment, reading, and writing its config directory only. */
const least = () => ["--allow-net=127.0.0.1", "--allow-env", "--allow-read", `--allow-write=${configDir}`]

describe("the SDK under Deno", () => {
  it("private chat calls, non-streamed and streamed, with least permissions: originals back, receipts verified, aliases upstream", async () => {
    const run = await runDeno(least())
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout.trim())
    expect(result.runtime).toMatch(/^deno 2\./)
    expect(result.content).toBe(`Echo: ${PROMPT}`)
    expect(result.streamed).toBe(`Echo: ${PROMPT}`)
    expect(result.receiptVerified).toBe(true)
    expect(result.streamReceiptVerified).toBe(true)
    expect(JSON.stringify(result.tokenised)).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    expect(JSON.stringify(result.tokenised)).not.toContain(EMAIL)

    const seen = fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
    expect(fx.provider.received).toHaveLength(2)
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain("7946")
    expect(seen).toMatch(/<PHONE_1_[0-9a-z]+>/)
    // The device key was created where it was allowed to be, private to the user.
    expect(statSync(join(configDir, "attester-key.json")).mode & 0o077).toBe(0)
  })

  it("the permissions are needed: without write access to the config directory the call fails before anything is sent", async () => {
    rmSync(join(configDir, "attester-key.json"), { force: true })
    const run = await runDeno(["--allow-net=127.0.0.1", "--allow-env", "--allow-read", "--no-prompt"])
    expect(run.code).not.toBe(0)
    expect(run.stderr).toMatch(/NotCapable|PermissionDenied|Requires write access/)
    expect(existsSync(join(configDir, "attester-key.json"))).toBe(false)
    expect(fx.provider.received).toHaveLength(0)
  })
})
