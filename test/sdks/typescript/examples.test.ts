// Every file in sdks/typescript/examples runs, as a user runs it (`node examples/<name>.ts` with GATEWAY_URL and
// GATEWAY_KEY_FILE), against a real gateway and the fake provider: it exits 0, prints the originals, and the provider
// saw aliases only. `@privacy-relay/sdk` resolves to this checkout's source (test/support/sdkFromSource.ts).
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 4 })
const EXAMPLES = join(import.meta.dirname, "../../../sdks/typescript/examples")
const HOOK = join(import.meta.dirname, "../../support/sdkFromSource.ts")

let dir: string
let keyFile: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pr-sdk-examples-"))
  keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${(await fundedKey(fx.gw)).apiKey}\n`, { mode: 0o600 })
})

const run = (name: string) =>
  new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ["--import", HOOK, join(EXAMPLES, name)], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"), GATEWAY_URL: fx.gw.url, GATEWAY_KEY_FILE: keyFile }
    }, (error, stdout, stderr) => (error ? reject(new Error(`${name}: ${error.message}\n${stderr}`)) : resolve(stdout)))
  )

const upstream = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")

/** What each example must print (originals back) and must never have sent (the originals). */
const CASES: Record<string, { readonly prints: ReadonlyArray<string | RegExp>; readonly neverUpstream: ReadonlyArray<string> }> = {
  "quickstart.ts": {
    prints: [
      "answer: Echo: Draft a short reply to jane.doe@example.com about invoice 4411.",
      /what left this device: .*<EMAIL_1_[0-9a-z]+>/,
      /receipt verified: true/
    ],
    neverUpstream: ["jane.doe@example.com"]
  },
  "streaming.ts": {
    prints: ["answer: Echo: Call +44 20 7946 0958 and ask for Dr. Ada Lovelace.\n", /what left this device: .*<PHONE_1_[0-9a-z]+>/, /receipt verified: true/],
    neverUpstream: ["7946 0958", "Ada Lovelace"]
  },
  "openai-drop-in.ts": {
    prints: ["answer: Echo: Refund IBAN GB82 WEST 1234 5698 7654 32 today.", "streamed: Echo: Write to maria.lopez@example.org.\n"],
    neverUpstream: ["WEST 1234", "maria.lopez@example.org"]
  },
  "anthropic-drop-in.ts": {
    prints: ["answer: Echo: Summarise the ticket from jane.doe@example.com.", "streamed: Echo: Phone +44 20 7946 0958 back.\n"],
    neverUpstream: ["jane.doe@example.com", "7946 0958"]
  },
  "files.ts": {
    prints: [
      "answer: Echo: Format these contacts as a markdown table.",
      /what left this device: .*--- File: contacts\.csv ---.*<EMAIL_1_[0-9a-z]+>/,
      "<tr><td>Ada Lovelace</td><td>ada@example.org</td></tr><tr><td>Alan Turing</td><td>alan.turing@example.org</td></tr>"
    ],
    neverUpstream: ["ada@example.org", "Ada Lovelace", "alan.turing@example.org"]
  },
  "receipts.ts": {
    prints: [
      /(receipt [0-9a-f]{8} seq \d+ verified: true\n){3}/,
      "chain verified: true (3 receipts)",
      /(in the transparency log: true\n){3}/,
      /log consistent since the kept head \(\d+ -> \d+ leaves\): true/
    ],
    neverUpstream: []
  },
  "conversation.ts": {
    prints: [
      "turn 1: Echo: My name is Dr. Ada Lovelace, write to ada@example.org.\n",
      "turn 2: Echo: Send the invoice to ada@example.org.\n",
      "turns kept on this device: 4 aliases: 2",
      /what left this device on turn 2: .*<EMAIL_1_[0-9a-z]+>.*<EMAIL_1_[0-9a-z]+>/
    ],
    neverUpstream: ["ada@example.org", "Ada Lovelace"]
  },
  "effect.ts": {
    prints: ["answer: Echo: Remind jane.doe@example.com of Friday's meeting.", "receipt verified: true", "failed as expected: 404 model_not_found"],
    neverUpstream: ["jane.doe@example.com"]
  }
}

describe("sdks/typescript/examples", () => {
  it("the folder holds exactly the examples this test runs", () => {
    expect(readdirSync(EXAMPLES).sort()).toEqual(Object.keys(CASES).sort())
  })

  for (const [name, expected] of Object.entries(CASES)) {
    it(`${name} runs against a gateway: originals printed, only aliases upstream`, async () => {
      fx.provider.reset()
      const stdout = await run(name)
      for (const p of expected.prints) {
        if (typeof p === "string") expect(stdout).toContain(p)
        else expect(stdout).toMatch(p)
      }
      expect(fx.provider.received.length).toBeGreaterThan(0)
      const seen = upstream()
      for (const original of expected.neverUpstream) expect(seen).not.toContain(original)
    })
  }
})
