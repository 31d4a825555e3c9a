import { describe, expect, it } from "vitest"
import {
  AeadOpenError,
  envelopeKekId,
  generateKekBytes,
  importKek,
  kekId,
  openSecret,
  openSecretWith,
  sealSecret,
  sealSecretWithKekId
} from "../../../src/crypto/aead.ts"

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
    for (const bad of ["", "aead2.x.y", "aead3.a.b.c", "aead1.!!.??", "aead1.AAAA.AAAA", sealed + ".extra.more"]) {
      await expect(openSecret(kek, bad, "ctx:a")).rejects.toBeInstanceOf(AeadOpenError)
    }
  })

  it("names a KEK by a fixed 8-character id that is not the key (the same bytes give the same id)", async () => {
    const raw = new Uint8Array(32).fill(7)
    const id = await kekId(raw)
    expect(id).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect((await importKek(raw)).id).toBe(id)
    expect(await kekId(new Uint8Array(32).fill(8))).not.toBe(id)
    expect(raw).toEqual(new Uint8Array(32).fill(7))
  })

  it("aead1 envelopes open under whichever of several KEKs sealed them, and report which", async () => {
    const current = await importKek(generateKekBytes())
    const previous = await importKek(generateKekBytes())
    const old = await sealSecret(previous, "sk-old", "byok:org_1:openai")
    expect(envelopeKekId(old)).toBeUndefined()
    const opened = await openSecretWith([current, previous], old, "byok:org_1:openai")
    expect(opened.plaintext).toBe("sk-old")
    expect(opened.kek).toBe(previous)
    await expect(openSecretWith([current], old, "byok:org_1:openai")).rejects.toBeInstanceOf(AeadOpenError)
    await expect(openSecretWith([current, previous], old, "byok:org_2:openai")).rejects.toBeInstanceOf(AeadOpenError)
  })

  it("aead2 envelopes name their KEK and open only under it", async () => {
    const current = await importKek(generateKekBytes())
    const previous = await importKek(generateKekBytes())
    const sealed = await sealSecretWithKekId(previous, "whsec_x", "ctx:a")
    expect(sealed).toMatch(new RegExp(`^aead2\\.${previous.id.replace(/[-]/g, "\\-")}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+$`))
    expect(envelopeKekId(sealed)).toBe(previous.id)
    const opened = await openSecretWith([current, previous], sealed, "ctx:a")
    expect(opened).toEqual({ plaintext: "whsec_x", kek: previous })
    await expect(openSecretWith([current], sealed, "ctx:a")).rejects.toThrow(`sealed under KEK ${previous.id}, which this node does not hold`)
    await expect(openSecretWith([current, previous], sealed, "ctx:b")).rejects.toBeInstanceOf(AeadOpenError)
    // The id is not trusted: an envelope relabelled with another key's id does not open under that key.
    const relabelled = sealed.replace(previous.id, current.id)
    await expect(openSecretWith([current, previous], relabelled, "ctx:a")).rejects.toBeInstanceOf(AeadOpenError)
  })

  it("accepts only 32-byte keys", async () => {
    await expect(importKek(new Uint8Array(16))).rejects.toThrow(RangeError)
  })
})
