import { p256 } from "@noble/curves/nist.js"
import { execFile } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { deterministicSign } from "../../../sdks/vectors/build/keys.ts"
import { VECTORS_DIR } from "./vectorFiles.ts"

const run = promisify(execFile)
const NODE = join(import.meta.dirname, "../../../node_modules/.bin/node")
const GENERATE = join(VECTORS_DIR, "generate.ts")
const FILES = ["aliases.json", "attestation.json", "egress-policy-cases.json", "jcs.json", "merkle-proofs.json", "receipts.json", "sha256.json", "tokeniser-spans.json", "transparency.json", "webhooks.json"]
/** Written by hand (the policy is the source the generator and every engine read), not generated. */
const SOURCES = ["egress-policy.json"]

describe("sdks/vectors/generate.ts", () => {
  it("--check passes: the committed files are exactly what the generator produces (npm run vectors -- --check)", async () => {
    const { stdout } = await run(NODE, [GENERATE, "--check"])
    expect(stdout).toContain("vectors up to date: 10 files")
  })

  it("--check fails, naming the file, when a vector on disk differs (the check can fail)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vectors-"))
    for (const name of FILES) cpSync(join(VECTORS_DIR, name), join(dir, name))
    const edited = readFileSync(join(dir, "webhooks.json"), "utf8").replace('"ok": true', '"ok": false')
    writeFileSync(join(dir, "webhooks.json"), edited)
    const failure = await run(NODE, [GENERATE, "--check", "--dir", dir]).then(() => undefined, (e: { code: number; stderr: string }) => e)
    expect(failure?.code).toBe(1)
    expect(failure?.stderr).toContain("webhooks.json")
    expect(failure?.stderr).not.toContain("receipts.json")
  })

  it("every file has a description and a version, and the folder holds nothing unlisted", () => {
    expect(readdirSync(VECTORS_DIR).filter((f) => f.endsWith(".json")).sort()).toEqual([...FILES, ...SOURCES].sort())
    for (const name of [...FILES, ...SOURCES]) {
      const content = JSON.parse(readFileSync(join(VECTORS_DIR, name), "utf8"))
      expect(typeof content.description, name).toBe("string")
      expect(content.version, name).toBe(1)
    }
  })

  it("the signer is plain RFC 6979: it reproduces the RFC's P-256/SHA-256 'sample' signature (A.2.5)", () => {
    const d = hexToBytes("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721")
    const signature = deterministicSign(d, new TextEncoder().encode("sample"))
    expect(bytesToHex(signature).toUpperCase()).toBe(
      "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716" + "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"
    )
    expect(p256.verify(signature, new TextEncoder().encode("sample"), p256.getPublicKey(d), { lowS: false })).toBe(true)
  })
})
