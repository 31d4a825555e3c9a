import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { ALIAS_PATTERN, tagFromMac } from "../../../sdks/typescript/src/tokeniser/alias.ts"
import { createSession } from "../../../sdks/typescript/src/tokeniser/session.ts"
import { createStreamingDetokeniser } from "../../../sdks/typescript/src/tokeniser/streamingDetokeniser.ts"
import { tokeniseText } from "../../../sdks/typescript/src/tokeniser/tokeniseText.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const a = readVectors("aliases.json")

const hmac = async (secretHex: string, message: string) => {
  const key = await crypto.subtle.importKey("raw", hexToBytes(secretHex) as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  return bytesToHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message))))
}

describe("aliases.json: the engine's alias format", () => {
  it("the pattern and tags", async () => {
    expect(a.pattern).toBe(ALIAS_PATTERN.source)
    for (const t of a.tags.per_request) {
      expect(await hmac(a.request_secret_hex, t.message)).toBe(t.hmac_sha256)
      expect(tagFromMac(hexToBytes(t.hmac_sha256), a.request_tag_length)).toBe(t.tag)
    }
    for (const t of a.tags.stable) {
      expect(await hmac(a.stable_secret_hex, t.message)).toBe(t.hmac_sha256)
      expect(tagFromMac(hexToBytes(t.hmac_sha256), a.stable_tag_length)).toBe(t.tag)
    }
    for (const c of a.is_alias) expect(new RegExp(`^${a.pattern}$`).test(c.text), c.text).toBe(c.alias)
  })

  it("tokenisation with fixed secrets and names off gives the same text and map", async () => {
    for (const c of a.tokenise) {
      const session = createSession({ names: "off", secret: hexToBytes(a.request_secret_hex) })
      expect(await tokeniseText(c.text, session)).toBe(c.output)
      expect([...session.map]).toEqual(c.map)
      expect({ ...session.detectorsFired }).toEqual(c.detectors_fired)
    }
    for (const c of a.tokenise_stable) {
      const session = createSession({ names: "off", secret: hexToBytes(a.request_secret_hex), stableAliasSecret: hexToBytes(a.stable_secret_hex) })
      expect(await tokeniseText(c.text, session)).toBe(c.output)
      expect([...session.map]).toEqual(c.map)
    }
  })
})

describe("aliases.json: streaming detokenisation across chunk boundaries", () => {
  it.each(rows(a.streams))("%s", (_n, s: any) => {
    const detokeniser = createStreamingDetokeniser(new Map(s.map))
    expect(s.chunks.map((chunk: string) => detokeniser.push(chunk))).toEqual(s.outputs)
    expect(detokeniser.flush()).toBe(s.flush)
    expect(s.outputs.join("") + s.flush).toBe(s.joined)
  })
})
