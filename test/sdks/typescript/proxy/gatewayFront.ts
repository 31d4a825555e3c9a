/**
 * The gateway address the proxy tests use. The proxy only starts against a host that answers the
 * gateway identity probe (GET /api/.well-known/service-receipt-pubkeys.jwks). When the test gateway
 * passes that probe, its own URL is used. While it does not (the receipt-key routes are built
 * separately), a tiny front on 127.0.0.1 answers the probe with a real P-256 JWKS and forwards every
 * other request byte for byte to the gateway, so the proxy still talks to the real gateway.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { exportPublicJwk, generateSigningKeyPair } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { GATEWAY_IDENTITY_PROBE_PATH, probeGateway } from "../../../../sdks/typescript/src/client/gatewayUrl.ts"

export interface GatewayFront {
  readonly url: string
  /** True when the front answers the probe because the gateway has no such route yet. */
  readonly probeStubbed: boolean
  readonly close: () => Promise<void>
}

export const gatewayFront = async (gatewayUrl: string): Promise<GatewayFront> => {
  const passes = await probeGateway(gatewayUrl).then(
    () => true,
    () => false
  )
  if (passes) return { url: gatewayUrl, probeStubbed: false, close: async () => {} }

  const jwks = JSON.stringify({
    keys: [{ ...(await exportPublicJwk((await generateSigningKeyPair()).publicKey)), kid: "test", alg: "ES256", use: "sig" }]
  })
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === GATEWAY_IDENTITY_PROBE_PATH) {
      res.writeHead(200, { "content-type": "application/jwk-set+json" })
      res.end(jwks)
      return
    }
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length" && name !== "connection") {
        headers.set(name, value)
      }
    }
    const upstream = await fetch(`${gatewayUrl}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined
    })
    const body = Buffer.from(await upstream.arrayBuffer())
    const out: Record<string, string> = {}
    upstream.headers.forEach((value, name) => {
      if (name !== "content-length" && name !== "content-encoding" && name !== "transfer-encoding") out[name] = value
    })
    res.writeHead(upstream.status, { ...out, "content-length": String(body.length) })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    probeStubbed: true,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
