import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runTransparency } from "../../../sdks/typescript/src/transparencyMonitor.ts"
import { exportPublicJwk, generateSigningKeyPair, jwkThumbprintKid } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { bytesToHex } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { toReceiptJwk } from "../../../sdks/typescript/src/wire/receipts/jwks.ts"
import { MerkleTree, merkleLeafHash } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"
import { signerFromPrivateKey, signEnvelope } from "../../../sdks/typescript/src/wire/receipts/signer.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { newOrg, seal, sealInput } from "../../support/receipts.ts"

/**
 * `privacy-relay transparency monitor` (issue 42): against a real gateway (first head, growth proved consistent, no
 * change), and against a log that misbehaves (a stub gateway signing heads of a log it rewrote, shrank or forged):
 * every fork and rollback is reported with a non-zero exit and the kept head stays.
 */

const run = async (args: Array<string>, env: Record<string, string> = {}) => {
  let out = ""
  let err = ""
  const io = {
    output: { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream,
    errors: { write: (s: string) => ((err += s), true) } as unknown as NodeJS.WritableStream
  }
  const code = await runTransparency(args, env, io)
  const last = out.trim().split("\n").at(-1) ?? ""
  let report: any
  try {
    report = JSON.parse(last)
  } catch {
    report = undefined
  }
  return { code, report, out, err }
}

const stateFile = () => join(mkdtempSync(join(tmpdir(), "pr-monitor-")), "head.json")

describe("against a real gateway", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0", RECEIPT_KEY_ROTATION: "off" })
  })
  afterAll(() => gw.close())

  const sealSome = async (n: number) => {
    const orgId = await newOrg(gw)
    for (let i = 0; i < n; i++) await seal(gw, sealInput(orgId))
  }

  it("keeps the first head, then proves each growth consistent; an unchanged log is unchanged", async () => {
    const state = stateFile()
    await sealSome(2)
    const first = await run(["monitor", "--state", state, "--gateway", gw.url])
    expect(first.code).toBe(0)
    expect(first.report).toMatchObject({ status: "first_head", gateway: gw.url, old: null, reason: null })
    const kept = JSON.parse(readFileSync(state, "utf8"))
    expect(kept).toMatchObject({ v: "transparency-sth-v1", tree_size: first.report.new.tree_size, root_hash: first.report.new.root_hash })

    await sealSome(3)
    const grown = await run(["monitor", "--state", state], { GATEWAY_URL: gw.url })
    expect(grown.code).toBe(0)
    expect(grown.report).toMatchObject({ status: "consistent", old: { tree_size: kept.tree_size }, new: { tree_size: kept.tree_size + 3 } })
    expect(JSON.parse(readFileSync(state, "utf8")).tree_size).toBe(kept.tree_size + 3)

    const again = await run(["monitor", "--state", state, "--gateway", gw.url])
    expect(again.code).toBe(0)
    expect(again.report.status).toBe("unchanged")
  })

  it("the installed command: exit code and one JSON line on stdout", async () => {
    const state = stateFile()
    const child = spawn(join(import.meta.dirname, "../../../node_modules/.bin/node"), ["sdks/typescript/src/cli.ts", "transparency", "monitor", "--state", state, "--gateway", gw.url], {
      cwd: join(import.meta.dirname, "../../.."),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (c) => (stdout += c))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(code).toBe(0)
    expect(stdout.trim().split("\n")).toHaveLength(1)
    expect(JSON.parse(stdout).status).toBe("first_head")
  })
})

/** A gateway that serves a log it controls: its heads are validly signed, whatever the log holds. */
const stubGateway = async () => {
  const pair = await generateSigningKeyPair({ extractable: true })
  const publicJwk = await exportPublicJwk(pair.publicKey)
  const kid = await jwkThumbprintKid(publicJwk)
  const signer = signerFromPrivateKey(kid, pair.privateKey)
  let tree = new MerkleTree()
  let sthOverride: ((head: any) => any) | undefined
  const head = async (size: number) => {
    const body = {
      v: "transparency-sth-v1" as const,
      alg: "ES256" as const,
      kid,
      iss: "https://stub-relay.example",
      tree_size: size,
      root_hash: bytesToHex(await tree.rootHash(size)),
      timestamp: new Date().toISOString()
    }
    return { ...body, sig: await signEnvelope(body, (b) => signer.sign(b)) }
  }
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://x")
    const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
    if (url.pathname === "/api/.well-known/service-receipt-pubkeys.jwks") return json(200, { keys: [toReceiptJwk(publicJwk, kid)] })
    if (url.pathname === "/api/v1/transparency/sth") {
      const h = await head(tree.size)
      return json(200, sthOverride === undefined ? h : sthOverride(h))
    }
    if (url.pathname === "/api/v1/transparency/consistency") {
      const first = Number(url.searchParams.get("first"))
      const second = Number(url.searchParams.get("second") ?? tree.size)
      if (!(first >= 1 && first <= second && second <= tree.size)) return json(400, { error: { code: "tree_size_out_of_range", message: "out of range" } })
      return json(200, { first, second, consistency_path: (await tree.consistencyProof(first, second)).map(bytesToHex), sth: await head(second) })
    }
    json(404, { error: { code: "not_found", message: "no" } })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  /** Replaces the log with one of these leaves (a rewrite of history when an earlier leaf differs). */
  const setLog = async (leaves: ReadonlyArray<string>) => {
    const next = new MerkleTree()
    for (const leaf of leaves) await next.append(await merkleLeafHash(new TextEncoder().encode(leaf)))
    tree = next
  }
  return {
    url,
    setLog,
    overrideHead: (f: ((head: any) => any) | undefined) => (sthOverride = f),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("against a log that misbehaves", () => {
  let stub: Awaited<ReturnType<typeof stubGateway>>
  beforeAll(async () => {
    stub = await stubGateway()
  })
  afterAll(() => stub.close())

  const leaves = (n: number, tag = "") => Array.from({ length: n }, (_, i) => `receipt ${i}${i === 2 ? tag : ""}`)

  /** A monitor that has kept the head of the honest log of `size` leaves. */
  const keptAt = async (size: number) => {
    stub.overrideHead(undefined)
    await stub.setLog(leaves(size))
    const state = stateFile()
    expect((await run(["monitor", "--state", state, "--gateway", stub.url])).report.status).toBe("first_head")
    return { state, kept: readFileSync(state, "utf8") }
  }
  const expectKeptUnchanged = (state: string, kept: string) => expect(readFileSync(state, "utf8")).toBe(kept)

  it("the honest log growing is consistent", async () => {
    const { state } = await keptAt(5)
    await stub.setLog(leaves(9))
    const { code, report } = await run(["monitor", "--state", state, "--gateway", stub.url])
    expect([code, report.status]).toEqual([0, "consistent"])
  })

  it("fork: the log grew from a rewritten history (an earlier receipt changed)", async () => {
    const { state, kept } = await keptAt(5)
    await stub.setLog(leaves(9, " rewritten"))
    const { code, report } = await run(["monitor", "--state", state, "--gateway", stub.url])
    expect(code).toBe(3)
    expect(report.status).toBe("fork")
    expect(report.reason).toMatch(/^consistency: the consistency path does not lead from root [0-9a-f]{64} to [0-9a-f]{64}/)
    expect(report.evidence).toMatchObject({ old_head: { tree_size: 5 }, new_head: { tree_size: 9 }, proof: { first: 5, second: 9 } })
    expectKeptUnchanged(state, kept)
  })

  it("fork: another root for the size it kept, signed all the same", async () => {
    const { state, kept } = await keptAt(5)
    await stub.setLog(leaves(5, " rewritten"))
    const { code, report } = await run(["monitor", "--state", state, "--gateway", stub.url])
    expect([code, report.status]).toEqual([3, "fork"])
    expect(report.reason).toBe("two different root hashes for tree size 5, both signed by the gateway")
    expect(report.evidence.old_head.root_hash).not.toBe(report.evidence.new_head.root_hash)
    expectKeptUnchanged(state, kept)
  })

  it("rollback: the log is smaller than the head it kept", async () => {
    const { state, kept } = await keptAt(5)
    await stub.setLog(leaves(3))
    const { code, report } = await run(["monitor", "--state", state, "--gateway", stub.url])
    expect([code, report.status]).toEqual([3, "rollback"])
    expect(report.reason).toBe("the log has 3 leaves, fewer than the 5 of the kept head")
    expectKeptUnchanged(state, kept)
  })

  it("invalid: a head whose signature does not verify, or of another log", async () => {
    const { state, kept } = await keptAt(5)
    await stub.setLog(leaves(6))
    stub.overrideHead((h) => ({ ...h, tree_size: 7 }))
    const forged = await run(["monitor", "--state", state, "--gateway", stub.url])
    expect([forged.code, forged.report.status]).toEqual([3, "invalid"])
    expect(forged.report.reason).toMatch(/^signed tree head: does not verify with key /)
    stub.overrideHead((h) => ({ ...h, kid: "not-published" }))
    expect((await run(["monitor", "--state", state, "--gateway", stub.url])).report.reason).toBe("signed tree head: no published verification key has kid not-published")
    expectKeptUnchanged(state, kept)
  })

  it("error (exit 1, nothing judged): the gateway unreachable, a state file that is not a tree head", async () => {
    const { state, kept } = await keptAt(2)
    const down = await run(["monitor", "--state", state, "--gateway", "http://127.0.0.1:9"])
    expect([down.code, down.report.status]).toEqual([1, "error"])
    expect(down.report.reason).toMatch(/could not be reached/)
    expectKeptUnchanged(state, kept)
    const broken = stateFile()
    writeFileSync(broken, "not json")
    const notJson = await run(["monitor", "--state", broken, "--gateway", stub.url])
    expect([notJson.code, notJson.report.status]).toEqual([1, "error"])
    expect(notJson.report.reason).toMatch(/is not JSON: move it away to start over$/)
    writeFileSync(broken, JSON.stringify({ tree_size: 3 }))
    expect((await run(["monitor", "--state", broken, "--gateway", stub.url])).report.reason).toMatch(/does not hold a signed tree head \(v must be "transparency-sth-v1"\)$/)
    expect(readFileSync(broken, "utf8")).toBe(JSON.stringify({ tree_size: 3 }))
  })

  it("usage (exit 2): no state file, no gateway, a gateway that is not https nor loopback, an unknown subcommand", async () => {
    for (const [args, env, reason] of [
      [["monitor", "--gateway", stub.url], {}, /--state <file> is required/],
      [["monitor", "--state", "x.json"], {}, /--gateway <url> or GATEWAY_URL is required/],
      [["monitor", "--state"], {}, /unknown or incomplete argument "--state"/],
      [["monitor", "--state", "x.json", "--gateway", "http://relay.example"], {}, /^gateway: /],
      // GATEWAY_URL is checked by the monitor's settings schema, before anything is fetched.
      [["monitor", "--state", "x.json"], { GATEWAY_URL: "ftp://relay.example" }, /^gateway: GATEWAY_URL must be an https URL, not ftp:$/],
      [["watch"], {}, /unknown subcommand "watch"/]
    ] as const) {
      const { code, report } = await run([...args], env)
      expect(code, args.join(" ")).toBe(2)
      expect(report, args.join(" ")).toMatchObject({ status: "usage" })
      expect(report.reason, args.join(" ")).toMatch(reason)
    }
    const help = await run(["monitor", "--help"])
    expect(help.code).toBe(0)
    expect(help.out).toContain("privacy-relay transparency monitor --state <file>")
  })
})
