// The MCP server (programs/mcp.ts) driven by the official MCP client over stdio, against a real gateway and the fake
// provider: the 22 tools are listed with schemas; every tool answers good input and refuses bad input with a tool
// error carrying a stable code while the server stays up; the provider never sees an original value; receipts of
// private calls verify offline; a failing name model refuses (fail-closed); a dead gateway is a clear tool error.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPortalToken } from "../../layers/AdminOperations.ts"
import { createJwksCache, verifyChainExport, verifyReceipt } from "../../sdks/typescript/src/index.ts"
import { buildAttestation, encodeAttestationHeader } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { ENGINE } from "../../sdks/typescript/src/client/engine.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { sha256Hex } from "../../sdks/typescript/src/wire/crypto/jcs.ts"
import { callFails, callOk, stdioMcpClient, TOOL_NAMES } from "../support/mcpServer.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

const fx = useRelayFixture()


const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const PROMPT = `Email ${EMAIL} or call ${PHONE} about the invoice.`

const dir = mkdtempSync(join(tmpdir(), "pr-mcp-"))
let mcp: Client
let orgId: string
let receipt: Record<string, any>

const privateFile = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  chmodSync(path, 0o600)
  return path
}

const providerSaw = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")

beforeAll(async () => {
  const key = await fundedKey(fx.gw)
  orgId = key.orgId
  const portal = (await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:admin" }))).token
  mcp = await stdioMcpClient({
    GATEWAY_URL: fx.gw.url,
    GATEWAY_KEY_FILE: privateFile("key", key.apiKey),
    PORTAL_TOKEN_FILE: privateFile("portal", portal),
    NAME_MODEL: "builtin",
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
    MCP_RECEIPTS_FILE: join(dir, "receipts.jsonl"),
    MCP_MAX_FILE_BYTES: "4096"
  })
})
afterAll(async () => {
  await mcp?.close()
})

describe("MCP server over stdio: listing", () => {
  it("tools/list answers exactly the 22 tools, each with an object input schema and an actionable description", async () => {
    const { tools } = await mcp.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.description!.length).toBeGreaterThan(60)
    }
    expect(tools.find((t) => t.name === "tokenise")!.inputSchema.required).toEqual(["text"])
    expect(tools.filter((t) => t.outputSchema !== undefined).length).toBe(22)
  })
})

describe("MCP server over stdio: tools on the device", () => {
  it("tokenise then detokenise restores the originals; bad input is a tool error and the server stays up", async () => {
    const tokenised = await callOk(mcp, "tokenise", { text: PROMPT })
    expect(tokenised.text).not.toContain(EMAIL)
    expect(tokenised.text).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    expect(tokenised.detectors_fired).toEqual({ EMAIL: 1, PHONE: 1 })
    expect((await callOk(mcp, "detokenise", { text: `Answer: ${tokenised.text}` })).text).toBe(`Answer: ${PROMPT}`)
    await callFails(mcp, "tokenise", { text: 5 }, "invalid_arguments")
    await callFails(mcp, "tokenise", {}, "invalid_arguments")
    await callFails(mcp, "detokenise", { text: "Hi <EMAIL_9_zzzz>" }, "unknown_alias")
    await callFails(mcp, "no_such_tool", {}, "unknown_tool")
    expect((await callOk(mcp, "count_tokens", { text: "still up" })).tokens).toBeGreaterThan(0)
  })

  it("detect_pii answers types and offsets; count_tokens and engine_info answer; their bad input is refused", async () => {
    const found = await callOk(mcp, "detect_pii", { text: PROMPT })
    expect(found.entities).toEqual([
      { type: "EMAIL", start: PROMPT.indexOf(EMAIL), end: PROMPT.indexOf(EMAIL) + EMAIL.length },
      { type: "PHONE", start: PROMPT.indexOf(PHONE), end: PROMPT.indexOf(PHONE) + PHONE.length }
    ])
    await callFails(mcp, "detect_pii", { text: ["x"] }, "invalid_arguments")
    expect(await callOk(mcp, "count_tokens", { text: "hello world", encoding: "cl100k_base" })).toEqual({ tokens: 2, encoding: "cl100k_base", characters: 11 })
    await callFails(mcp, "count_tokens", { text: "x", encoding: "p50k" }, "invalid_arguments")
    const info = await callOk(mcp, "engine_info")
    expect(info.engine).toEqual({ id: ENGINE.id, version: ENGINE.version, sha256: ENGINE.sha256 })
    expect(info.detectors).toContain("IBAN")
    expect(info.name_model).toMatchObject({ setting: "builtin", state: "available" })
    await callFails(mcp, "engine_info", { verbose: true }, "invalid_arguments")
  })

  it("tokenise_file reads text files by path or base64; too large, unsupported or missing input is refused", async () => {
    const path = join(dir, "notes.md")
    writeFileSync(path, `# Notes\n\nWrite to ${EMAIL}.\n`)
    const byPath = await callOk(mcp, "tokenise_file", { path })
    expect(byPath).toMatchObject({ filename: "notes.md", replaced: 1 })
    expect(byPath.text).toMatch(/^# Notes\n\nWrite to <EMAIL_1_[0-9a-z]+>\.\n$/)
    const inline = await callOk(mcp, "tokenise_file", { filename: "a.csv", content_base64: Buffer.from(`name,phone\nx,${PHONE}\n`).toString("base64") })
    expect(inline.text).not.toContain("7946")
    await callFails(mcp, "tokenise_file", { filename: "big.txt", content_base64: Buffer.alloc(5000, 97).toString("base64") }, "file_too_large")
    writeFileSync(join(dir, "big.txt"), Buffer.alloc(5000, 97))
    await callFails(mcp, "tokenise_file", { path: join(dir, "big.txt") }, "file_too_large")
    await callFails(mcp, "tokenise_file", { filename: "a.docx", content_base64: "AAAA" }, "file_malformed")
    await callFails(mcp, "tokenise_file", { filename: "a.exe", content_base64: "AAAA" }, "file_unsupported_type")
    await callFails(mcp, "tokenise_file", { path: join(dir, "absent.txt") }, "file_not_found")
    await callFails(mcp, "tokenise_file", {}, "invalid_arguments")
  })

  it("tokenise_image refuses an image whose header declares too many pixels, and what is not an image (OCR itself: mcp-ocr.test.ts)", async () => {
    const huge = Buffer.from("89504e470d0a1a0a0000000d49484452000186a0000186a00806000000", "hex")
    const text = await callFails(mcp, "tokenise_image", { filename: "scan.png", content_base64: huge.toString("base64") }, "image_too_large")
    expect(text).toContain("Nothing was read or sent")
    await callFails(mcp, "tokenise_image", { filename: "scan.txt", content_base64: "AAAA" }, "file_unsupported_type")
    await callFails(mcp, "tokenise_image", { path: 7 }, "invalid_arguments")
  })

  it("reconstruct writes md and html with the originals restored, never overwrites, refuses unknown aliases", async () => {
    const { text } = await callOk(mcp, "tokenise", { text: `Contact ${EMAIL}` })
    const md = join(dir, "answer.md")
    expect(await callOk(mcp, "reconstruct", { text: `## Reply\n\n${text}`, format: "md", path: md })).toMatchObject({ format: "md", restored: 1, path: md })
    expect(readFileSync(md, "utf8")).toBe(`## Reply\n\nContact ${EMAIL}`)
    const html = await callOk(mcp, "reconstruct", { text: `${text} <b>`, format: "html", filename: "Reply" })
    const page = Buffer.from(html.content_base64, "base64").toString("utf8")
    expect(page).toContain(`<p>Contact ${EMAIL} &lt;b&gt;</p>`)
    expect(page).toContain("<title>Reply</title>")
    await callFails(mcp, "reconstruct", { text, format: "md", path: md }, "file_exists")
    await callFails(mcp, "reconstruct", { text: "<EMAIL_3_abcd>", format: "txt" }, "unknown_alias")
    await callFails(mcp, "reconstruct", { text, format: "pdf" }, "invalid_arguments")
    expect(existsSync(join(dir, "answer.txt"))).toBe(false)
  })
})

describe("MCP server over stdio: tools through the gateway", () => {
  it("private_completion: the provider sees aliases only, the answer has the originals, the receipt verifies offline", async () => {
    const result = await callOk(mcp, "private_completion", { model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    expect(result.content).toBe(`Echo: ${PROMPT}`)
    const seen = providerSaw()
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain("7946")
    expect(seen).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    expect(result.receipt_verified).toBe(true)
    expect(JSON.stringify(result.tokenised_request)).not.toContain(EMAIL)
    receipt = result.receipt
    // Independently of the server: the receipt verifies against the gateway's published keys.
    expect((await verifyReceipt(receipt, { jwks: createJwksCache({ gatewayUrl: fx.gw.url }) })).valid).toBe(true)
    expect(receipt.chain.chain_id).toBe(`receipt-v2-org-${orgId}`)
    // The call's aliases joined the session: what left the device can be restored later in this session.
    const sent: string = result.tokenised_request.messages[0].content
    expect(sent).not.toContain(EMAIL)
    expect((await callOk(mcp, "detokenise", { text: `Saw: ${sent}` })).text).toBe(`Saw: ${PROMPT}`)
    await callFails(mcp, "private_completion", { model: "local-chat" }, "invalid_arguments")
    await callFails(mcp, "private_completion", { model: "no-such-model", messages: [{ role: "user", content: "hi" }] }, /model/)
  })

  it("aliases from tokenise sent in a private_completion come back restored from the session's map", async () => {
    const { text } = await callOk(mcp, "tokenise", { text: `Mail ${EMAIL}` })
    const result = await callOk(mcp, "private_completion", { model: "local-chat", messages: [{ role: "user", content: text }] })
    expect(result.content).toBe(`Echo: Mail ${EMAIL}`)
    expect(providerSaw()).not.toContain(EMAIL)
  })

  it("private_messages (Anthropic format) is private and receipted; a missing max_tokens is refused", async () => {
    const result = await callOk(mcp, "private_messages", { model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: PROMPT }] })
    expect(result.content).toContain(EMAIL)
    expect(providerSaw()).not.toContain(EMAIL)
    expect(result.receipt_verified).toBe(true)
    const sent: string = result.tokenised_request.messages[0].content
    const reply = await callOk(mcp, "reconstruct", { text: `Re: ${sent}`, format: "txt" })
    expect(Buffer.from(reply.content_base64, "base64").toString("utf8")).toBe(`Re: ${PROMPT}`)
    await callFails(mcp, "private_messages", { model: "local-chat", messages: [{ role: "user", content: "hi" }] }, "invalid_arguments")
  })

  it("list_models, get_balance, usage_summary and key_scopes work with the gateway key alone", async () => {
    expect((await callOk(mcp, "list_models")).models.map((m: any) => m.id)).toContain("local-chat")
    await callFails(mcp, "list_models", { all: 1 }, "invalid_arguments")
    const balance = await callOk(mcp, "get_balance")
    expect(balance.org_id).toBe(orgId)
    expect(Number(balance.balance_usd)).toBeLessThan(10)
    expect(Number(balance.balance_usd)).toBeGreaterThan(9)
    await callFails(mcp, "get_balance", { org_id: "other" }, "invalid_arguments")
    const usage = await callOk(mcp, "usage_summary")
    expect(usage.org_id).toBe(orgId)
    expect(usage.totals.find((t: any) => t.model === "local-chat").calls).toBeGreaterThanOrEqual(3)
    await callFails(mcp, "usage_summary", { from: "yesterday-ish" }, "invalid_arguments")
    const scopes = await callOk(mcp, "key_scopes")
    expect(scopes).toMatchObject({ org_id: orgId, permissions: [], models: null })
    expect(scopes.key_prefix).toMatch(/^svc_/)
    // The spec's vocabulary, with the routes each scope allows; a key without scopes holds them all.
    expect(scopes.scopes.map((s: any) => s.name)).toEqual(["messages", "completions", "buffer"])
    const byName = Object.fromEntries(scopes.scopes.map((s: any) => [s.name, s]))
    expect(byName.completions.routes).toEqual(expect.arrayContaining(["POST /api/v1/chat/completions", "POST /api/v1/embeddings"]))
    expect(byName.messages.routes).toContain("POST /api/v1/messages")
    expect(byName.buffer.routes).toEqual([])
    expect(scopes.scopes.every((s: any) => s.granted === true)).toBe(true)
    await callFails(mcp, "key_scopes", { key: "x" }, "invalid_arguments")
  })

  it("meter sums this session's receipts", async () => {
    const meter = await callOk(mcp, "meter")
    expect(meter.calls).toBe(3)
    expect(meter.input_tokens).toBeGreaterThan(0)
    expect(Number(meter.list_cost_usd)).toBeGreaterThan(0)
    await callFails(mcp, "meter", { reset: true }, "invalid_arguments")
  })
})

describe("MCP server over stdio: receipts", () => {
  it("verify_receipt: valid, tampered (a result, not an error), and a wrong type (an error)", async () => {
    expect(await callOk(mcp, "verify_receipt", { receipt })).toMatchObject({ valid: true, reason: null })
    const header = Buffer.from(JSON.stringify(receipt)).toString("base64")
    expect((await callOk(mcp, "verify_receipt", { receipt: header })).valid).toBe(true)
    const tampered = await callOk(mcp, "verify_receipt", { receipt: { ...receipt, output_tokens: receipt.output_tokens + 1 } })
    expect(tampered.valid).toBe(false)
    expect(tampered.reason).toMatch(/signature/)
    await callFails(mcp, "verify_receipt", { receipt: 42 }, "invalid_arguments")
  })

  it("get_receipt and list_receipts: local, and the gateway's stored v1 with the portal token", async () => {
    expect(await callOk(mcp, "get_receipt", { jti: receipt.jti })).toMatchObject({ source: "local", receipt: { jti: receipt.jti, v: 2 } })
    const local = await callOk(mcp, "list_receipts")
    expect(local.receipts.length).toBe(3)
    expect(local.receipts.map((r: any) => r.jti)).toContain(receipt.jti)
    const gateway = await callOk(mcp, "list_receipts", { source: "gateway", limit: 10 })
    expect(gateway.receipts.length).toBeGreaterThanOrEqual(3)
    // Stored v1 receipts are listed as the same summaries as local ones (model and tokens from their claims).
    for (const r of gateway.receipts) {
      expect(r).toMatchObject({ v: "v1", jti: expect.stringMatching(/^[0-9a-f]{32}$/), model: expect.any(String), input_tokens: expect.any(Number), output_tokens: expect.any(Number), chain_id: expect.any(String), seq: expect.any(Number) })
      expect(Number.isNaN(Date.parse(r.timestamp))).toBe(false)
    }
    expect(gateway.receipts.map((r: any) => r.model)).toContain(receipt.model)
    const v1 = await callOk(mcp, "get_receipt", { jti: "0".repeat(31) + "1" }).catch((e) => e)
    expect(v1).toBeInstanceOf(Error)
    await callFails(mcp, "get_receipt", { jti: "0".repeat(32) }, /not_found/)
    await callFails(mcp, "get_receipt", { jti: "XYZ" }, "invalid_arguments")
    await callFails(mcp, "list_receipts", { limit: 0 }, "invalid_arguments")
  })

  it("receipt_chain_export and chain_verify over the receipts held here; a tampered export is a break", async () => {
    const exported = await callOk(mcp, "receipt_chain_export")
    const chain = exported.chains.find((c: any) => c.chain_id === `receipt-v2-org-${orgId}`)
    expect(chain.count).toBe(3)
    expect(chain.receipts.map((r: any) => r.chain.seq)).toEqual([1, 2, 3])
    expect(exported.jsonl.split("\n").length).toBe(3)
    await callFails(mcp, "receipt_chain_export", { chain_id: "receipt-v2-org-nope" }, "chain_not_found")
    const held = await callOk(mcp, "chain_verify")
    expect(held.valid).toBe(true)
    expect(held.chains[0]).toMatchObject({ valid: true, verified: 3, held: 3, runs: 1 })
    expect((await callOk(mcp, "chain_verify", { receipts: chain.receipts })).valid).toBe(true)
    const broken = await callOk(mcp, "chain_verify", { receipts: [chain.receipts[0], chain.receipts[2]] })
    expect(broken.valid).toBe(false)
    expect(broken.chains[0].break.index).toBe(1)
    await callFails(mcp, "chain_verify", { receipts: "all" }, "invalid_arguments")
    // The export verifies with the SDK alone, offline, as an auditor receives it (object or JSON Lines); a gap, a
    // reordering and a changed receipt are each caught and named.
    const jwks = createJwksCache({ gatewayUrl: fx.gw.url })
    expect((await verifyChainExport(exported, { jwks })).valid).toBe(true)
    expect((await verifyChainExport(exported.jsonl, { jwks })).valid).toBe(true)
    const [r1, r2, r3] = chain.receipts
    const named = async (receipts: Array<unknown>) => (await verifyChainExport({ chains: [{ chain_id: chain.chain_id, receipts }] }, { jwks })).chains[0]!.break
    expect(await named([r1, r3])).toMatchObject({ index: 1, seq: 3, kind: "gap" })
    expect(await named([r1, r3, r2])).toMatchObject({ index: 1, seq: 3, kind: "reorder" })
    expect(await named([r1, { ...r2, output_tokens: r2.output_tokens + 1 }, r3])).toMatchObject({ index: 1, seq: 2, kind: "tampered" })
  })

  it("countersign_receipt: the gateway countersigns a device attestation and it verifies; bad hashes are refused", async () => {
    const body = new TextEncoder().encode(JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] }))
    const attestation = await buildAttestation({ route: "chat.completions", bodyBytes: body, detectorsFired: {}, engine: ENGINE, keyPair: await generateSigningKeyPair() })
    const result = await callOk(mcp, "countersign_receipt", {
      attestation: encodeAttestationHeader(attestation),
      provider: "local",
      model: "local-chat",
      hash_upstream_request: attestation.claims["v3-attestation"].egress_sha256,
      hash_upstream_response: await sha256Hex("answer")
    })
    expect(result.countersignature).toMatchObject({ v: "v3-countersignature", witness: "asserted" })
    expect(result.verification.valid).toBe(true)
    await callFails(mcp, "countersign_receipt", { attestation: "x", provider: "local", model: "m", hash_upstream_request: "nothex", hash_upstream_response: "0".repeat(64) }, "invalid_arguments")
    await callFails(mcp, "countersign_receipt", { attestation: { v: "v3" }, provider: "local", model: "m", hash_upstream_request: "0".repeat(64), hash_upstream_response: "0".repeat(64) }, "invalid_request")
  })

  it("transparency_inclusion: the proof of a receipt is checked against the signed tree head", async () => {
    let result: Record<string, any> | undefined
    for (let i = 0; i < 50 && result === undefined; i++) {
      const r = await mcp.callTool({ name: "transparency_inclusion", arguments: { jti: receipt.jti } })
      if (!r.isError) result = r.structuredContent as Record<string, any>
      else await new Promise((done) => setTimeout(done, 100))
    }
    expect(result).toMatchObject({ valid: true, reason: null })
    expect(result!.proof.receipt_id).toBe(receipt.jti)
    await callFails(mcp, "transparency_inclusion", { jti: "f".repeat(32) }, /not_found/)
    await callFails(mcp, "transparency_inclusion", { jti: 1 }, "invalid_arguments")
  })
})

describe("MCP server over stdio: failures of its surroundings", () => {
  it("a failing name model is fail-closed: tokenise and private_completion refuse, nothing reaches the provider", async () => {
    const key = await fundedKey(fx.gw)
    const closed = await stdioMcpClient({
      GATEWAY_URL: fx.gw.url,
      GATEWAY_KEY_FILE: privateFile("key-closed", key.apiKey),
      NAME_MODEL: "http://127.0.0.1:9/names",
      PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
      MCP_RECEIPTS_FILE: join(dir, "receipts-closed.jsonl")
    })
    try {
      await callFails(closed, "tokenise", { text: PROMPT }, "name_model_unavailable")
      await callFails(closed, "detect_pii", { text: PROMPT }, "name_model_unavailable")
      await callFails(closed, "private_completion", { model: "local-chat", messages: [{ role: "user", content: PROMPT }] }, "name_model_unavailable")
      expect(fx.provider.received.length).toBe(0)
      expect((await callOk(closed, "engine_info")).name_model.state).toBe("unavailable")
    } finally {
      await closed.close()
    }
  })

  it("a gateway that is down, or no key configured, is a clear tool error while on-device tools keep working", async () => {
    const down = await stdioMcpClient({
      GATEWAY_URL: "http://127.0.0.1:9",
      GATEWAY_KEY_FILE: privateFile("key-down", (await fundedKey(fx.gw)).apiKey),
      PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
      MCP_RECEIPTS_FILE: join(dir, "receipts-down.jsonl")
    })
    const keyless = await stdioMcpClient({ PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"), MCP_RECEIPTS_FILE: join(dir, "receipts-keyless.jsonl") })
    try {
      // Gateway-locked: even a read sends the key nowhere until the URL has answered the gateway identity probe.
      await callFails(down, "get_balance", {}, "gateway_identity_failed")
      await callFails(down, "private_completion", { model: "local-chat", messages: [{ role: "user", content: "hi" }] }, "gateway_identity_failed")
      await callFails(down, "verify_receipt", { receipt }, "jwks_unavailable")
      expect((await callOk(down, "tokenise", { text: EMAIL })).replaced).toBe(1)
      await callFails(keyless, "list_models", {}, "configuration_error")
      expect((await callOk(keyless, "count_tokens", { text: "a b" })).tokens).toBe(2)
    } finally {
      await down.close()
      await keyless.close()
    }
  })
})
