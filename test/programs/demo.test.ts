// The anonymous demo (`npm run demo`, programs/demo.ts over the SDK's demo): a real child process against a real
// gateway and the fake provider, driven through piped stdin and through a real pseudo-terminal (util-linux `script`).
// Each turn must show what left the device (aliases, never the original) and the answer with the originals back; the
// provider must see aliases only; the history must travel with every turn; 402 / 401 key_expired / 429 say what
// happened and what to do.
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useRelayFixture } from "../support/relayFixture.ts"

const PROGRAM = join(import.meta.dirname, "../../programs/demo.ts")
const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const ALIAS = /<EMAIL_1_[0-9a-z]+>/

let dir: string
const children: Array<ChildProcess> = []
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "pr-demo-"))
})
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
  rmSync(dir, { recursive: true, force: true })
})

/** A running demo: its output so far, a way to wait for some of it, its stdin and its exit. */
interface Demo {
  readonly child: ChildProcess
  readonly out: () => string
  readonly err: () => string
  readonly waitFor: (pattern: RegExp | string, from?: number) => Promise<void>
  readonly exited: Promise<number | null>
}

const start = (command: string, args: Array<string>, gatewayUrl: string, env: Record<string, string> = {}): Demo => {
  const child = spawn(command, args, {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      // The device key and alias secret go to a scratch directory, not the user's.
      PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
      GATEWAY_URL: gatewayUrl,
      ...env
    },
    stdio: ["pipe", "pipe", "pipe"]
  })
  children.push(child)
  let out = ""
  let err = ""
  const listeners = new Set<() => void>()
  child.stdout!.on("data", (chunk) => {
    out += chunk
    for (const l of listeners) l()
  })
  child.stderr!.on("data", (chunk) => {
    err += chunk
    for (const l of listeners) l()
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const waitFor = (pattern: RegExp | string, from = 0) =>
    new Promise<void>((resolve, reject) => {
      const test = () => {
        const text = out.slice(from) + err
        return typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)
      }
      if (test()) return resolve()
      const timer = setTimeout(() => {
        listeners.delete(check)
        reject(new Error(`timed out waiting for ${pattern}; stdout:\n${out}\nstderr:\n${err}`))
      }, 60_000)
      const check = () => {
        if (test()) {
          clearTimeout(timer)
          listeners.delete(check)
          resolve()
        }
      }
      listeners.add(check)
      void exited.then(() => setTimeout(check, 50))
    })
  return { child, out: () => out, err: () => err, waitFor, exited }
}

const node = process.execPath
const runDemo = (gatewayUrl: string, env: Record<string, string> = {}) => start(node, [PROGRAM], gatewayUrl, env)

describe("npm run demo, piped stdin", () => {
  const fx = useRelayFixture()

  it("chats two turns: shows what left the device (aliases) and the answer with originals; the history goes along; the provider saw only aliases", async () => {
    const demo = runDemo(fx.gw.url)
    demo.child.stdin!.write(`Email ${EMAIL} about the invoice\n`)
    demo.child.stdin!.end(`And call ${PHONE} if she does not answer\n`)
    expect(await demo.exited).toBe(0)
    const out = demo.out()

    expect(out).toMatch(/Demo key svc_[a-z2-7]+\.\.\.: \$2\.00 of credit, valid until \d{4}-\d\d-\d\dT/)
    // The whole key is never printed.
    expect(out).not.toMatch(/svc_[a-z2-7]{20,}/)
    expect(out).toContain("Model local-chat")
    const [, first, second] = out.split(/\nyou> /)
    expect(first).toContain(`Email ${EMAIL} about the invoice`)
    expect(first).toMatch(new RegExp(`left this device> Email ${ALIAS.source} about the invoice\n`))
    expect(first).toContain(`answer> Echo: Email ${EMAIL} about the invoice`)
    expect(second).toMatch(/left this device> And call <PHONE_1_[0-9a-z]+> if she does not answer\n/)
    expect(second).toContain("with the 2 earlier messages of this chat")
    expect(second).toContain(`answer> Echo: And call ${PHONE} if she does not answer`)
    // What left the device never shows an original.
    for (const line of out.split("\n").filter((l) => l.startsWith("left this device>"))) {
      expect(line).not.toContain(EMAIL)
      expect(line).not.toContain("7946")
    }
    expect(out).toContain("Bye.")
    expect(demo.err()).toBe("")

    // The provider got two calls, the second with the history; aliases only.
    const bodies = fx.provider.received.filter((r) => r.path.endsWith("/chat/completions")).map((r) => JSON.parse(r.body.toString("utf8")))
    expect(bodies).toHaveLength(2)
    expect(bodies[1].messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"])
    expect(bodies[1].messages[0].content).toMatch(ALIAS)
    expect(bodies[1].messages[1].content).toMatch(ALIAS)
    const seen = fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain("7946")
  })

  it("in a real terminal (pseudo-terminal): prompts, streams the answer with the original, /quit ends", async () => {
    // `script` runs the demo on a new pseudo-terminal: stdin and stdout are a TTY, so readline runs in terminal mode.
    const demo = start("script", ["-q", "-e", "-c", `${JSON.stringify(node)} ${JSON.stringify(PROGRAM)}`, "/dev/null"], fx.gw.url, { TERM: "dumb" })
    await demo.waitFor("you> ")
    const mark = demo.out().length
    // A terminal's Enter is a carriage return.
    demo.child.stdin!.write(`Remind ${EMAIL} of the meeting\r`)
    await demo.waitFor(/answer> [^\n]*meeting/, mark)
    await demo.waitFor("you> ", demo.out().lastIndexOf("answer> "))
    demo.child.stdin!.write("/quit\r")
    expect(await demo.exited).toBe(0)
    const out = demo.out().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replaceAll("\r", "")
    expect(out).toMatch(new RegExp(`left this device> Remind ${ALIAS.source} of the meeting\n`))
    expect(out).toContain(`answer> Echo: Remind ${EMAIL} of the meeting`)
    expect(out).toContain("Bye.")
    const seen = fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
    expect(seen).toMatch(ALIAS)
    expect(seen).not.toContain(EMAIL)
  })

  it("a third demo key from the same network the same day: a clear 429 message, exit 1, nothing relayed", async () => {
    const demo = runDemo(fx.gw.url)
    demo.child.stdin!.end(`Email ${EMAIL}\n`)
    expect(await demo.exited).toBe(1)
    expect(demo.err()).toMatch(/no demo key: the gateway gives at most 2 demo keys per network per day \(429 rate_limited\)\. Try again in \d+ h\./)
    expect(fx.provider.received).toHaveLength(0)
  })
})

describe("npm run demo, when the key can no longer be used", () => {
  // The test spends the credit by hand in SQL, behind the gateway's back: its wallet mirror must not outlive that, so
  // it is trusted for 100 ms only and the test waits longer than that before the next turn.
  const fx = useRelayFixture({ WALLET_MIRROR_TTL_MS: "100" })

  /** The demo's organisation, from the key prefix it printed. */
  const orgOf = async (demo: Demo) => {
    const prefix = /Demo key (svc_[a-z2-7]+)\.\.\./.exec(demo.out())![1]
    return (await fx.gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", prefix))[0].org_id
  }

  it("402 once the $2 is spent: says the credit is used up and what to do, exit 1, nothing relayed", async () => {
    const demo = runDemo(fx.gw.url, { NAME_MODEL: "off" })
    demo.child.stdin!.write("hello\n")
    await demo.waitFor("answer> Echo: hello\n")
    const orgId = await orgOf(demo)
    await fx.gw.query("UPDATE wallets SET balance_micros = 0 WHERE org_id = $1", orgId)
    await new Promise((r) => setTimeout(r, 250))
    fx.provider.reset()
    demo.child.stdin!.write(`Email ${EMAIL}\n`)
    expect(await demo.exited).toBe(1)
    expect(demo.err()).toContain("The demo key's $2.00 of credit is spent: $0.00 remains (402 insufficient_balance); nothing was sent to the model.")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("401 key_expired after 24 hours: says so and how to get a new key, exit 1, nothing relayed", async () => {
    const demo = runDemo(fx.gw.url, { NAME_MODEL: "off" })
    demo.child.stdin!.write("hello\n")
    await demo.waitFor("answer> Echo: hello\n")
    const orgId = await orgOf(demo)
    await fx.gw.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE org_id = $1", orgId)
    fx.provider.reset()
    const mark = demo.out().length
    // The gateway learns of the change through the database's notification, within moments: a turn sent before
    // then is still answered (and counted below); the first one after it ends the demo.
    for (let i = 0; i < 20 && demo.child.exitCode === null; i++) {
      demo.child.stdin!.write(`Email ${EMAIL}\n`)
      await Promise.race([demo.exited, new Promise((r) => setTimeout(r, 500))])
    }
    expect(await demo.exited).toBe(1)
    expect(demo.err()).toContain("The demo key has expired (demo keys last 24 hours; 401 key_expired). Run the demo again for a new key.")
    // Nothing was relayed for the refused turn: the provider saw only the turns answered before the expiry was known.
    const answered = demo.out().slice(mark).split("answer> Echo: ").length - 1
    expect(fx.provider.received).toHaveLength(answered)
  })
})

describe("npm run demo, bad usage", () => {
  it("--help prints the usage and exits 0; an unknown argument exits 2; an unreachable gateway is one clear line", async () => {
    const helpDemo = start(node, [PROGRAM, "--help"], "http://127.0.0.1:9")
    const bad = start(node, [PROGRAM, "--api-key", "svc_x"], "http://127.0.0.1:9")
    const nonLoopback = start(node, [PROGRAM], "http://relay.example")
    const unreachable = start(node, [PROGRAM], "http://127.0.0.1:9")
    nonLoopback.child.stdin!.end()
    unreachable.child.stdin!.end()
    const codes = await Promise.all([helpDemo.exited, bad.exited, nonLoopback.exited, unreachable.exited])
    expect(codes).toEqual([0, 2, 2, 1])

    expect(helpDemo.out()).toContain("privacy-relay demo [--model <id>]")
    expect(helpDemo.out()).toContain("GATEWAY_URL")
    expect(bad.err()).toContain('unknown argument "--api-key"')
    expect(nonLoopback.err()).toMatch(/GATEWAY_URL http:\/\/relay\.example is plain http to a non-loopback host/)
    expect(unreachable.err()).toMatch(/^privacy-relay demo: cannot reach the gateway at http:\/\/127\.0\.0\.1:9 \(fetch failed\)\. Is it running/)
    expect(unreachable.err().trim().split("\n")).toHaveLength(1)
  })
})
