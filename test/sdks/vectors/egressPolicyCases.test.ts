import { describe, expect, it } from "vitest"
import { EgressRefusal, tokeniseRequest } from "../../../sdks/typescript/src/tokeniser/index.ts"
import { egressRefusalStatus, MAX_EGRESS_DEPTH } from "../../../sdks/typescript/src/wire/egressPolicy.ts"
import { hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const v = readVectors("egress-policy-cases.json")

const ROUTES = ["chat.completions", "messages", "messages.count_tokens", "embeddings", "responses"]

describe("egress-policy-cases.json: the TypeScript engine answers every case", () => {
  it("covers the five routes, refusals of each code and the opt-ins", () => {
    expect(v.max_depth).toBe(MAX_EGRESS_DEPTH)
    expect(new Set(v.cases.map((c: any) => c.route))).toEqual(new Set(ROUTES))
    const codes = new Set(v.cases.flatMap((c: any) => (c.expected.refusal === undefined ? [] : [c.expected.refusal.code])))
    expect(codes).toEqual(new Set(["unsupported_field", "unsupported_content", "nesting_too_deep"]))
    expect(v.cases.some((c: any) => c.options.media_policy === "pass" && c.expected.passthrough?.length > 0)).toBe(true)
    expect(v.cases.some((c: any) => c.options.passthrough_paths.some((p: string) => p.includes("*")) && c.expected.passthrough?.length > 0)).toBe(true)
  })

  it.each(rows(v.cases))("%s", async (_name, c: any) => {
    const run = tokeniseRequest(c.route, structuredClone(c.body), {
      names: "off",
      secret: hexToBytes(c.options.secret_hex),
      identifierSecret: hexToBytes(c.options.identifier_secret_hex),
      mediaPolicy: c.options.media_policy,
      passthroughPaths: c.options.passthrough_paths
    })
    if (c.expected.refusal !== undefined) {
      const error = await run.then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(EgressRefusal)
      const refusal = error as EgressRefusal
      expect({ code: refusal.code, path: refusal.path, ...(refusal.kind === undefined ? {} : { kind: refusal.kind }) }).toEqual(c.expected.refusal)
      expect(egressRefusalStatus(refusal.code)).toBe(c.expected.refusal.code === "unsupported_content" ? 415 : 400)
      return
    }
    const out = await run
    const text = new TextDecoder().decode(out.bodyBytes)
    expect(text).toBe(c.expected.body_jcs)
    expect(out.passthrough).toEqual(c.expected.passthrough)
    expect(out.detectorsFired).toEqual(c.expected.detectors_fired)
    expect([...out.map]).toEqual(c.expected.map)
    for (const value of c.never_sent ?? []) expect(text).not.toContain(value)
  })
})
