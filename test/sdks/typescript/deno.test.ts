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

const runDeno = (permissions: Array<string>, script = "main.ts") =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(DENO, ["run", "--config", join(REPO, "deno.json"), ...permissions, join(dir, script)], {
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

  it("files under Deno: a .docx written by reconstruct, attached to a private call, read and tokenised; the answer rebuilt into an .xlsx", async () => {
    writeFileSync(
      join(dir, "files.ts"),
      `import { readFile, reconstruct, RelayClient } from ${JSON.stringify(SDK)}
const docx = await reconstruct("# Team\\n\\n| Name | Email |\\n| --- | --- |\\n| Ada Lovelace | ${EMAIL} |", { format: "docx", filename: "team.docx" })
const read = await readFile(docx, { filename: "team.docx" })
let binary = ""
for (const byte of docx) binary += String.fromCharCode(byte)
const client = new RelayClient({ gatewayUrl: Deno.env.get("GATEWAY_URL")!, apiKeyFile: Deno.env.get("GATEWAY_KEY_FILE")! })
const answer = await client.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: [{ type: "file", file: { filename: "team.docx", file_data: "data:application/octet-stream;base64," + btoa(binary) } }] }] })
const xlsx = await reconstruct(answer.choices[0].message.content, { format: "xlsx", aliases: answer.aliases })
const sheet = await readFile(xlsx, { filename: "team.xlsx" })
console.log(JSON.stringify({ read: read.text, sheet: sheet.text }))
`
    )
    // exceljs reads the process umask (a sys permission without a finer name) when it writes a workbook.
    const run = await runDeno([...least(), "--allow-sys"], "files.ts")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout.trim())
    expect(result.read).toBe(`# Team\n\n| Name | Email |\n| --- | --- |\n| Ada Lovelace | ${EMAIL} |`)
    expect(result.sheet).toContain(`| 2 | Ada Lovelace | ${EMAIL} |`)
    expect(fx.provider.received).toHaveLength(1)
    const seen = fx.provider.received[0]!.body.toString("utf8")
    expect(seen).toContain("--- File: team.docx ---")
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain("Ada Lovelace")
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
