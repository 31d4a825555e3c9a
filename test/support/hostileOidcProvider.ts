import { exportJWK, generateKeyPair, SignJWT } from "jose"
import { createServer, type Server } from "node:http"

/** What the token endpoint's ID token gets wrong (`valid`: nothing, the control). */
export type IdTokenFault = "valid" | "other_issuer" | "other_audience" | "expired" | "wrong_nonce" | "foreign_signature"

/**
 * A minimal OpenID provider on 127.0.0.1 whose token endpoint answers an ID token with one chosen fault: discovery,
 * JWKS, an authorization endpoint that sends the browser straight back with a code, and a token endpoint. Only
 * for the refusals a real provider will not produce; the happy path is tested against the gateway's own provider.
 */
export const startHostileOidcProvider = async (clientId: string) => {
  const { privateKey, publicKey } = await generateKeyPair("RS256")
  const foreign = await generateKeyPair("RS256")
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" }
  let fault: IdTokenFault = "valid"
  let email = "mallory@example.com"
  let nonce = ""
  let issuer = ""
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", issuer)
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"]
      })
    }
    if (url.pathname === "/jwks") return json(200, { keys: [jwk] })
    if (url.pathname === "/authorize") {
      nonce = url.searchParams.get("nonce") ?? ""
      const back = new URL(url.searchParams.get("redirect_uri")!)
      back.searchParams.set("code", "code-1")
      back.searchParams.set("state", url.searchParams.get("state") ?? "")
      res.writeHead(302, { location: back.toString() })
      return res.end()
    }
    if (url.pathname === "/token" && req.method === "POST") {
      for await (const _ of req) {
        // the body is not needed: the code is not checked
      }
      const now = Math.floor(Date.now() / 1000)
      const token = await new SignJWT({ email, email_verified: true, nonce: fault === "wrong_nonce" ? "not-the-nonce" : nonce })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(fault === "other_issuer" ? "https://other-issuer.example.com" : issuer)
        .setAudience(fault === "other_audience" ? "someone-else" : clientId)
        .setSubject(`subject-${email}`)
        .setIssuedAt(fault === "expired" ? now - 7200 : now)
        .setExpirationTime(fault === "expired" ? now - 3600 : now + 300)
        .sign(fault === "foreign_signature" ? foreign.privateKey : privateKey)
      return json(200, { access_token: "at-1", token_type: "Bearer", expires_in: 300, id_token: token })
    }
    json(404, { error: "not_found" })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return {
    issuer,
    setFault: (f: IdTokenFault) => void (fault = f),
    /** The person the next ID token names (its subject follows the address). */
    setEmail: (e: string) => void (email = e),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
