// The SDK as a user gets it: `npm pack` of the workspace, installed into an empty folder (no workspace, no gateway
// dependencies), imported by plain JavaScript run on the machine's system Node (>= 20, no TypeScript stripping) and
// type-checked by a TypeScript consumer, then used against a running gateway.
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { withSdkPackLock } from "../../support/sdkPackLock.ts"
import { fundedKey } from "../../support/tenant.ts"
import { jcsSha256Hex } from "../../../sdks/typescript/src/wire/crypto/jcs.ts"

const fx = useRelayFixture()
const repo = join(import.meta.dirname, "..", "..", "..")
const GATEWAY_ONLY = ["@electric-sql/pglite", "@effect/sql-pg", "ioredis", "oidc-provider", "stripe", "nodemailer", "@effect/platform-node"]

/** The ```<lang> blocks of a README section (from `## <title>` to the next `## `). */
const readmeBlocks = (title: string, lang: string): Array<string> => {
  const readme = readFileSync(join(repo, "sdks/typescript/README.md"), "utf8")
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start === -1) throw new Error(`sdks/typescript/README.md has no ## ${title}`)
  const end = readme.indexOf("\n## ", start + 1)
  return [...readme.slice(start, end).matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1]!)
}

/** The machine's own node (not the project's pinned one), so the package is proven on what users have. */
const systemNode = () => {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) if (existsSync(candidate)) return candidate
  return execFileSync("bash", ["-lc", "command -v node"], { encoding: "utf8" }).trim()
}

describe("npm pack of @privacy-relay/sdk", () => {
  it("installs into an empty folder without gateway dependencies and makes a private call on plain Node", async () => {
    // The README's install lines, as written (only the tarball's folder differs): npm pack in the repository, then
    // npm install of that tarball in the user's project. The registry line is marked as not published yet.
    const [packBlock, installBlock, registryBlock] = readmeBlocks("Install", "sh")
    const packLine = packBlock!.split("\n")[0]!
    expect(packLine).toBe("npm pack --workspace @privacy-relay/sdk --pack-destination /tmp")
    expect(registryBlock).toMatch(/^npm install @privacy-relay\/sdk +# when published/)
    const out = mkdtempSync(join(tmpdir(), "pr-sdk-pack-"))
    const packArgs = packLine.replace("/tmp", out).split(" ").slice(1)
    const packed = JSON.parse(withSdkPackLock(() => execFileSync("npm", [...packArgs, "--json"], { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })))
    const tarball = join(out, packed[0].filename)
    expect(packBlock).toContain(`# -> ${packed[0].filename} `)
    expect(installBlock!.trim()).toBe(`npm install /tmp/${packed[0].filename}`)
    const files = (packed[0].files as Array<{ path: string }>).map((f) => f.path)
    expect(files).toContain("dist/index.js")
    expect(files).toContain("dist/browser.js")
    expect(files.filter((f) => f.startsWith("src/") || /(^|\/)test\//.test(f))).toEqual([])

    const app = mkdtempSync(join(tmpdir(), "pr-sdk-app-"))
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    execFileSync("npm", [...installBlock!.trim().replace(`/tmp/${packed[0].filename}`, tarball).split(" ").slice(1), "--no-audit", "--no-fund", "--prefer-offline"], { cwd: app, stdio: ["ignore", "ignore", "inherit"] })
    const installed = readdirSync(join(app, "node_modules")).flatMap((d) => (d.startsWith("@") ? readdirSync(join(app, "node_modules", d)).map((s) => `${d}/${s}`) : [d]))
    for (const name of GATEWAY_ONLY) expect(installed).not.toContain(name)

    const { apiKey } = await fundedKey(fx.gw)
    writeFileSync(join(app, "key"), `${apiKey}\n`, { mode: 0o600 })
    writeFileSync(
      join(app, "main.js"),
      `import { createImageRedactor, RelayClient } from "@privacy-relay/sdk"
import { readFileSync } from "node:fs"
import { jcsSha256Hex } from "@privacy-relay/sdk/wire"
const client = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL, apiKeyFile: "key", nameModel: "off" })
const answer = await client.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "Write to ada@example.org" }] })
const wireHash = await jcsSha256Hex({ b: [1, "é"], a: null })
// The image redactor without its optional peers (tesseract.js, @tesseract.js-data/eng): a refusal that says what to install.
const redactor = createImageRedactor({ names: "off" })
const redacted = await redactor({ bytes: readFileSync(process.env.EMAIL_PNG), mediaType: "image/png" }).then(() => "redacted", (e) => e.reason)
await redactor.close()
console.log(JSON.stringify({ content: answer.choices[0].message.content, verified: answer.receiptVerified, node: process.version, wireHash, redacted }))
`
    )
    fx.provider.reset()
    // Asynchronous: the gateway answering the child runs in this process.
    const { execFile } = await import("node:child_process")
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(systemNode(), ["main.js"], { cwd: app, env: { PATH: process.env.PATH, HOME: app, GATEWAY_URL: fx.gw.url, PRIVACY_RELAY_CONFIG_DIR: join(app, "config"), EMAIL_PNG: join(repo, "test/fixtures/images/email.png") } }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
    )
    const result = JSON.parse(stdout.trim())
    expect(result).toMatchObject({ content: "Echo: Write to ada@example.org", verified: true })
    // The wire subpath is the gateway's own JCS hashing.
    expect(result.wireHash).toBe(await jcsSha256Hex({ b: [1, "é"], a: null }))
    expect(Number(result.node.slice(1).split(".")[0])).toBeGreaterThanOrEqual(20)
    expect(result.redacted).toMatch(/^on-device OCR failed \(ocr_unavailable\): .*npm install (tesseract\.js|@tesseract\.js-data\/eng)/)
    expect(fx.provider.received.map((r) => r.body.toString()).join("")).not.toContain("ada@example.org")
    // The attested engine is the package's own build.
    expect(fx.provider.received).toHaveLength(1)

    // The README's Quickstart, as written (saved as main.mjs, run with node), against the local gateway it names: its
    // key file under ~/.config/privacy-relay (the SDK expands ~), its model one the development gateway serves.
    const [quickstart] = readmeBlocks("Quickstart", "ts")
    expect(quickstart).toContain(`gatewayUrl: "http://127.0.0.1:8080"`)
    writeFileSync(join(app, "main.mjs"), quickstart!.replace("http://127.0.0.1:8080", fx.gw.url))
    mkdirSync(join(app, ".config", "privacy-relay"), { recursive: true, mode: 0o700 })
    writeFileSync(join(app, ".config", "privacy-relay", "gateway-key"), `${apiKey}\n`, { mode: 0o600 })
    fx.provider.reset()
    const quickstartOut = await new Promise<string>((resolve, reject) =>
      execFile(systemNode(), ["main.mjs"], { cwd: app, env: { PATH: process.env.PATH, HOME: app, PRIVACY_RELAY_CONFIG_DIR: join(app, "config") } }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
    )
    expect(quickstartOut).toContain("Echo: Draft a reply to jane.doe@example.com about invoice 4411.")
    expect(quickstartOut).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    expect(quickstartOut).toMatch(/ true\n/) // receiptVerified
    expect(fx.provider.received.map((r) => r.body.toString()).join("")).not.toContain("jane.doe@example.com")

    // The package's bin (what `npx privacy-relay demo` runs): the anonymous demo chat, on the system Node.
    fx.provider.reset()
    const demo = await new Promise<string>((resolve, reject) => {
      const child = execFile(systemNode(), [join(app, "node_modules", ".bin", "privacy-relay"), "demo"], { cwd: app, env: { PATH: process.env.PATH, HOME: app, GATEWAY_URL: fx.gw.url, PRIVACY_RELAY_CONFIG_DIR: join(app, "config"), NAME_MODEL: "off" } }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
      child.stdin!.end("Write to ada@example.org\n")
    })
    expect(demo).toMatch(/left this device> Write to <EMAIL_1_[0-9a-z]+>\n/)
    expect(demo).toContain("answer> Echo: Write to ada@example.org\n")
    expect(fx.provider.received.map((r) => r.body.toString()).join("")).not.toContain("ada@example.org")

    // The starter kit's server as a fork runs it (starter-kit/README.md: its files next to the installed package, `node
    // server.ts`): its settings come through the package's `Settings` (the wire subpath), so a bad one is refused by
    // the published machinery, and good ones serve the built app. Node 24 runs the .ts files, as the README asks.
    const fork = join(app, "starter")
    mkdirSync(join(fork, "dist"), { recursive: true })
    for (const file of ["server.ts", "settings.ts", "gatewayKeyFile.ts"]) copyFileSync(join(repo, "starter-kit", file), join(fork, file))
    writeFileSync(join(fork, "dist", "index.html"), "<!doctype html><title>fork</title>")
    const forkEnv = { PATH: process.env.PATH, HOME: app, GATEWAY_URL: fx.gw.url, GATEWAY_KEY_FILE: join(app, "key"), STARTER_PORT: "0" }
    const refused = await new Promise<{ code: number | null; err: string }>((resolve) =>
      execFile(process.execPath, ["server.ts"], { cwd: fork, env: { ...forkEnv, STARTER_PORT: "abc" } }, (error, _out, err) => resolve({ code: error ? (error.code as number) : 0, err })))
    expect(refused.code).toBe(1)
    expect(refused.err.trim()).toBe(JSON.stringify({ level: "error", msg: 'STARTER_PORT must be a port number (0-65535), got "abc"' }))
    const forkServer = execFile(process.execPath, ["server.ts"], { cwd: fork, env: forkEnv })
    try {
      const listening = await new Promise<string>((resolve, reject) => {
        let out = ""
        forkServer.stdout!.on("data", (chunk) => {
          out += chunk
          if (out.includes("\n")) resolve(out)
        })
        forkServer.once("exit", (code) => reject(new Error(`the fork's server exited ${code}`)))
      })
      const { url } = JSON.parse(listening.split("\n")[0]!) as { url: string }
      const page = await fetch(`${url}/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain("<title>fork</title>")
    } finally {
      forkServer.kill("SIGTERM")
    }

    // Its type declarations serve a TypeScript consumer.
    writeFileSync(
      join(app, "check.ts"),
      `import { RelayClient, RelayError, type RelayStream } from "@privacy-relay/sdk"
import { verifyAttestation, type V3Envelope } from "@privacy-relay/sdk/wire"
export const verify: typeof verifyAttestation = verifyAttestation
export type Envelope = V3Envelope
const client: RelayClient = new RelayClient({ gatewayUrl: "https://relay.example", apiKey: "svc_x" })
const failure: RelayError | undefined = undefined
export const stream: Promise<RelayStream<Record<string, any>>> = client.chat.completions.create({ model: "m", stream: true, messages: [] })
export { failure }
`
    )
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ["check.ts"] }))
    execFileSync(join(repo, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], { cwd: app, stdio: ["ignore", "inherit", "inherit"] })
  }, 300_000)
})
