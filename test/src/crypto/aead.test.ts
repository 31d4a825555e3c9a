import { describe, expect, it } from "vitest"
import { AeadOpenError, generateKekBytes, importKek, openSecret, sealSecret } from "../../../src/crypto/aead.ts"

describe("AES-256-GCM secret envelopes", () => {
  it("round-trips a secret under the same key and context, with a fresh IV each time", async () => {
    const kek = await importKek(generateKekBytes())
    const a = await sealSecret(kek, "whsec_example", "webhook-endpoint-secret:org_1")
    const b = await sealSecret(kek, "whsec_example", "webhook-endpoint-secret:org_1")
    expect(a).toMatch(/^aead1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(a).not.toBe(b)
    expect(a).not.toContain("whsec_example")
    expect(await openSecret(kek, a, "webhook-endpoint-secret:org_1")).toBe("whsec_example")
    expect(await openSecret(kek, b, "webhook-endpoint-secret:org_1")).toBe("whsec_example")
  })

  it("refuses another context, another key, an altered ciphertext and malformed envelopes", async () => {
    const kek = await importKek(generateKekBytes())
    const other = await importKek(generateKekBytes())
    const sealed = await sealSecret(kek, "s3cret", "ctx:a")
    await expect(openSecret(kek, sealed, "ctx:b")).rejects.toBeInstanceOf(AeadOpenError)
    await expect(openSecret(other, sealed, "ctx:a")).rejects.toBeInstanceOf(AeadOpenError)
    const [prefix, iv, body] = sealed.split(".")
    const flipped = body!.slice(0, -2) + (body!.at(-2) === "A" ? "B" : "A") + body!.at(-1)
    await expect(openSecret(kek, `${prefix}.${iv}.${flipped}`, "ctx:a")).rejects.toBeInstanceOf(AeadOpenError)
    for (const bad of ["", "aead2.x.y", "aead1.!!.??", "aead1.AAAA.AAAA", sealed + ".extra"]) {
      await expect(openSecret(kek, bad, "ctx:a")).rejects.toBeInstanceOf(AeadOpenError)
    }
  })

  it("accepts only 32-byte keys", async () => {
    await expect(importKek(new Uint8Array(16))).rejects.toThrow(RangeError)
  })
})
