import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { useRelayFixture } from "../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"

const ROOT = join(import.meta.dirname, "../..")

/** The ```bash blocks of docs/raw-rest.md, in order: the page is the script. */
const walkThrough = () =>
  [...readFileSync(join(ROOT, "docs/raw-rest.md"), "utf8").matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join("\n")

/** Runs a bash script asynchronously: the gateway it calls serves from this same process, so nothing may block it. */
const bash = (script: string) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, GATEWAY: fx.gw.url, API_KEY: key.apiKey },
      timeout: 60_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

const fx = useRelayFixture()
let key: Awaited<ReturnType<typeof fundedKey>>
beforeAll(async () => {
  key = await fundedKey(fx.gw)
})

describe("docs/raw-rest.md", () => {
  it("its curl + openssl walk-through tokenises, attests, relays, verifies the receipt offline and online, and restores the original", async () => {
    const script = walkThrough()
    expect(script).toContain("openssl dgst -sha256 -verify")
    const before = await balanceMicros(fx.gw, key.orgId)
    const run = await bash(script)
    expect(run.stderr + run.stdout).toContain("tools agree with sdks/vectors")
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain("Verified OK")
    // The answer, restored on the "device" from the alias map.
    expect(run.stdout.trim().split("\n").at(-1)).toBe("Echo: Write a one-line reply to jane.doe@example.com about the March invoice.")

    // What left the machine: one call, the alias and never the address; it was billed and sealed.
    expect(fx.provider.received).toHaveLength(1)
    const upstream = fx.provider.received[0]!.body.toString("utf8")
    expect(upstream).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
    expect(upstream).not.toContain("jane.doe")
    expect(await balanceMicros(fx.gw, key.orgId)).toBeLessThan(before)
    const receipts = await fx.gw.query<{ n: number }>("SELECT count(*)::int AS n FROM receipts_v2 WHERE chain_id = $1", `receipt-v2-org-${key.orgId}`)
    expect(receipts[0]!.n).toBe(1)
  })

  it("fails when the receipt does not verify (the script checks, it does not just print)", async () => {
    // The same script with the receipt's signature input altered after the fact: openssl must refuse it.
    const tampered = walkThrough().replace(
      "jq 'del(.sig, .signature)' receipt.json | canonical > receipt-signing-input.json",
      "jq 'del(.sig, .signature) | .output_tokens += 1' receipt.json | canonical > receipt-signing-input.json"
    )
    expect(tampered).not.toBe(walkThrough())
    const run = await bash(tampered)
    expect(run.status).not.toBe(0)
    expect(run.stdout).toContain("Verification failure")
  })
})
