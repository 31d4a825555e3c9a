/**
 * A real coding agent through the local proxy (issue 34 item 5): Claude Code (`@anthropic-ai/claude-code`, pinned in
 * devDependencies) run headless (`claude -p`) the way a user points it at the proxy: ANTHROPIC_BASE_URL at the proxy,
 * any ANTHROPIC_API_KEY (the proxy holds the gateway key), non-essential traffic off, a fresh HOME. It sends what it
 * always sends (its system prompt, its tool definitions, streamed Anthropic messages) to a real gateway in front of
 * the fake provider. The prompt holds an e-mail address and a name: Claude Code prints them back, the provider and
 * the gateway only ever saw aliases, and every relayed call is receipted.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { FakeProvider } from "../../programs/fake-provider.ts"
import type { StartedProxy } from "../../sdks/typescript/src/proxy/startProxy.ts"
import { verifyReceipt } from "../../sdks/typescript/src/verify/receipt.ts"
import type { TestGateway } from "../support/gateway.ts"
import { startProxyFixture, type ProxyFixture } from "../support/proxyFixture.ts"

const CLAUDE = join(import.meta.dirname, "../../node_modules/.bin/claude")
const EMAIL = "jane.doe@example.com"
const NAME = "Margaret Thornbury"
const PROMPT = `Draft a short reply to ${NAME} at ${EMAIL} confirming Tuesday.`

let fx: ProxyFixture
let provider: FakeProvider
let gw: TestGateway
let proxy: StartedProxy

interface ClaudeRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `claude -p <prompt>` against the proxy; killed (and failed) after `timeoutMs`. */
const runClaude = (args: ReadonlyArray<string>, timeoutMs = 90_000): Promise<ClaudeRun> =>
  new Promise((resolve, reject) => {
    const home = join(fx.dir, "home")
    const child = spawn(CLAUDE, ["-p", ...args], {
      cwd: fx.dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH,
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        ANTHROPIC_BASE_URL: proxy.url,
        // The proxy ignores the client's key: it relays with the gateway key from its own key file.
        ANTHROPIC_API_KEY: "sk-ant-unused",
        // The models this gateway serves (its fake provider's): the main model and the small one Claude Code uses
        // for background work, as a user points it at the models their gateway offers.
        ANTHROPIC_MODEL: "local-chat",
        ANTHROPIC_DEFAULT_HAIKU_MODEL: "local-chat",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1"
      }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`claude did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

beforeAll(async () => {
  fx = await startProxyFixture({ name: "claude-code-e2e", provider: { streamPieceChars: 5 } })
  ;({ provider, gw, proxy } = fx)
}, 60_000)
afterAll(async () => {
  await fx?.close()
})
beforeEach(() => fx.reset())

const providerSaw = () => fx.providerSaw()

describe("Claude Code (headless) through the local proxy", () => {
  it("answers a prompt holding an e-mail and a name: originals printed, only aliases upstream, every call receipted", async () => {
    const run = await runClaude(["--output-format", "json", "--no-session-persistence", "--tools", "", "--", PROMPT])
    expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0)
    const result = JSON.parse(run.stdout) as { is_error: boolean; result: string }
    expect(result.is_error).toBe(false)
    // The fake provider echoes the user's text: Claude Code printed it with the originals restored.
    expect(result.result).toContain(EMAIL)
    expect(result.result).toContain(NAME)
    // What left the device and what the provider saw: aliases only, Anthropic messages (streamed, as Claude Code asks).
    const messageCalls = provider.received.filter((r) => r.path.startsWith("/v1/messages"))
    expect(messageCalls.length).toBeGreaterThan(0)
    const saw = providerSaw()
    expect(saw).not.toContain(EMAIL)
    expect(saw).not.toContain("Thornbury")
    expect(saw).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
    const relayed = fx.relayEgress()
    for (const call of relayed) {
      expect(call.body).not.toContain(EMAIL)
      expect(call.body).not.toContain("Thornbury")
    }
    const streamed = relayed.filter((c) => c.path === "/api/v1/messages" && JSON.parse(c.body).stream === true)
    expect(streamed.length).toBeGreaterThan(0)
    // Each streamed call ends with its receipt-v2 event, and the receipt verifies against the gateway's keys.
    const jwks = await (await fetch(`${gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
    for (const call of streamed) {
      const frame = (await call.answer).split("\n\n").find((f) => f.startsWith("event: receipt-v2\n"))
      expect(frame, "receipt-v2 event").toBeDefined()
      const data = JSON.parse(frame!.slice(frame!.indexOf("data: ") + 6)) as { receipt?: unknown }
      expect((await verifyReceipt((data.receipt ?? data) as never, { jwks })).valid).toBe(true)
    }
  }, 120_000)

  it("with Claude Code's own tools offered (the default set), the tool round trip keeps every original on the device", async () => {
    const run = await runClaude(["--output-format", "json", "--no-session-persistence", "--max-turns", "3", "--", PROMPT])
    const saw = providerSaw()
    // Whatever the fake model did with the tools, nothing of the prompt's personal data went upstream in the clear.
    expect(provider.received.length).toBeGreaterThan(0)
    expect(saw).not.toContain(EMAIL)
    expect(saw).not.toContain("Thornbury")
    // The definitions of Claude Code's tools went upstream (classified by the egress policy, not refused).
    expect(saw).toContain('"tools":[')
    // The fake model called Claude Code's first tool with the prompt as its input (restored on the device, so Claude
    // Code validated the real text), Claude Code answered with a tool_result, and the fake echoed that result.
    const result = JSON.parse(run.stdout) as { is_error: boolean; num_turns: number; result: string }
    expect(result.is_error).toBe(false)
    expect(result.num_turns).toBe(2)
    expect(provider.received).toHaveLength(2)
    const second = JSON.parse(provider.received[1]!.body.toString("utf8")) as { messages: Array<{ role: string; content: unknown }> }
    expect(JSON.stringify(second.messages.at(-1))).toContain('"type":"tool_result"')
    expect(JSON.stringify(second.messages.at(-2))).toContain('"type":"tool_use"')
    expect(result.result).toMatch(/^Echo: /)
  }, 120_000)
})
