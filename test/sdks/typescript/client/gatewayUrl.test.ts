import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { GATEWAY_IDENTITY_PROBE_PATH, parseGatewayUrl, probeGateway } from "../../../../sdks/typescript/src/client/gatewayUrl.ts"
import { ProxyStartError } from "../../../../sdks/typescript/src/client/ProxyStartError.ts"
import { exportPublicJwk, generateSigningKeyPair } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

describe("parseGatewayUrl (gateway-locked)", () => {
  it("accepts https and strips a trailing slash", () => {
    expect(parseGatewayUrl("https://gw.example.com/")).toBe("https://gw.example.com")
    expect(parseGatewayUrl("https://example.com/relay/")).toBe("https://example.com/relay")
  })

  it("accepts plain http only to loopback (development)", () => {
    expect(parseGatewayUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080")
    expect(parseGatewayUrl("http://localhost:8080")).toBe("http://localhost:8080")
    expect(parseGatewayUrl("http://[::1]:8080")).toBe("http://[::1]:8080")
    expect(() => parseGatewayUrl("http://example.com")).toThrow(/plain http to a non-loopback host/)
    expect(() => parseGatewayUrl("http://10.0.0.5:8080")).toThrow(/plain http/)
    expect(() => parseGatewayUrl("http://127.0.0.1.nip.io")).toThrow(/plain http/)
  })

  it("refuses other schemes, credentials, queries and a missing value", () => {
    expect(() => parseGatewayUrl("ftp://gw.example.com")).toThrow(/must be an https URL/)
    expect(() => parseGatewayUrl("https://user:pw@gw.example.com")).toThrow(/credentials/)
    expect(() => parseGatewayUrl("https://gw.example.com/?x=1")).toThrow(/query/)
    expect(() => parseGatewayUrl(undefined)).toThrow(/GATEWAY_URL is not set/)
    expect(() => parseGatewayUrl("not a url")).toThrow(/is not a URL/)
    // The wire's rule (test/sdks/typescript/wire/config/gatewayUrl.test.ts), refused as the SDK's start error.
    expect(() => parseGatewayUrl("ftp://gw.example.com")).toThrow(ProxyStartError)
  })
})

describe("probeGateway", () => {
  let server: Server
  let base: string
  let answer: { status: number; body: string }
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== GATEWAY_IDENTITY_PROBE_PATH) {
        res.writeHead(404).end()
        return
      }
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("accepts a host whose probe answers a JWKS of P-256 keys", async () => {
    const jwk = await exportPublicJwk((await generateSigningKeyPair()).publicKey)
    answer = { status: 200, body: JSON.stringify({ keys: [{ ...jwk, kid: "k1", alg: "ES256", use: "sig" }] }) }
    await expect(probeGateway(base)).resolves.toBeUndefined()
  })

  it("refuses a host without the probe route (e.g. a provider)", async () => {
    answer = { status: 404, body: "{}" }
    await expect(probeGateway(base)).rejects.toThrow(/is not a Privacy Relay gateway: status 404/)
  })

  it("refuses a 200 answer that is not a JWKS of P-256 keys", async () => {
    answer = { status: 200, body: JSON.stringify({ keys: [{ kty: "RSA", n: "x", e: "AQAB" }] }) }
    await expect(probeGateway(base)).rejects.toThrow(/not a JWKS of P-256 receipt keys/)
    answer = { status: 200, body: "<html>" }
    await expect(probeGateway(base)).rejects.toThrow(/not JSON/)
  })

  it("reports an unreachable host as unreachable", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    await expect(probeGateway(`http://127.0.0.1:${port}`)).rejects.toThrow(/cannot be reached/)
  })
})
