import { describe, expect, it } from "vitest"
import { signLicence, verifyLicence } from "../../../src/billing/licenceCode.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

describe("licence codes", () => {
  it("verify with the issuer's public key and carry the signed amount", async () => {
    const issuer = await generateSigningKeyPair()
    const { code, claims } = await signLicence(issuer.privateKey, { micros: 25_500_000n, now: new Date("2030-01-01T00:00:00Z") })
    expect(claims).toMatchObject({ usd: "25.500000", issued_at: "2030-01-01T00:00:00.000Z" })
    const verdict = await verifyLicence(issuer.publicKey, code)
    expect(verdict).toEqual({ ok: true, claims, micros: 25_500_000n })
  })

  it("refuse another issuer's code and any change to the payload", async () => {
    const issuer = await generateSigningKeyPair()
    const stranger = await generateSigningKeyPair()
    const { code } = await signLicence(stranger.privateKey, { micros: 1_000_000n })
    expect(await verifyLicence(issuer.publicKey, code)).toEqual({ ok: false, reason: "bad signature" })
    const own = (await signLicence(issuer.privateKey, { micros: 1_000_000n })).code.split(".")
    const claims = JSON.parse(Buffer.from(own[1], "base64url").toString())
    const changed = Buffer.from(JSON.stringify({ ...claims, usd: "9.000000" })).toString("base64url")
    expect(await verifyLicence(issuer.publicKey, `${own[0]}.${changed}.${own[2]}`)).toEqual({ ok: false, reason: "bad signature" })
    expect(await verifyLicence(issuer.publicKey, 42)).toEqual({ ok: false, reason: "not a licence code" })
  })
})
