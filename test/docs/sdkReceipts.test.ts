// Issue 32 item 10: the Python README did not say where a receipt comes from or how to get the keys to check it. Every
// SDK README's Receipts section names the answer's receipt, whether the client verified it, where the keys are
// published, and the helper that fetches them for receipts verified later. (The Python section runs as written in
// sdks/python/tests/test_examples.py; the TypeScript verifiers are tested in test/sdks/typescript/verify.)
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")

const SDKS = [
  { readme: "sdks/typescript/README.md", receipt: "answer.receipt", verified: "answer.receiptVerified", helper: "createJwksCache", source: "sdks/typescript/src/verify/index.ts" },
  { readme: "sdks/python/README.md", receipt: "answer.receipt", verified: "answer.receipt_verified", helper: "create_jwks_cache", source: "sdks/python/src/privacy_relay/__init__.py" }
]

const section = (text: string, title: string) => {
  const start = text.indexOf(`\n## ${title}\n`)
  if (start === -1) return ""
  const end = text.indexOf("\n## ", start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}

describe("every SDK README says where receipts and their keys come from", () => {
  for (const sdk of SDKS) {
    it(sdk.readme, () => {
      const receipts = section(readFileSync(join(ROOT, sdk.readme), "utf8"), "Receipts")
      expect(receipts, `${sdk.readme} has a ## Receipts section`).not.toBe("")
      for (const name of [sdk.receipt, sdk.verified, "/api/.well-known/service-receipt-pubkeys.jwks", sdk.helper]) expect(receipts).toContain(name)
      // The helper it names is exported by the SDK.
      expect(readFileSync(join(ROOT, sdk.source), "utf8")).toContain(sdk.helper)
    })
  }
})
