import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createLicence, createPortalToken, revokeKey } from "../../../layers/AdminOperations.ts"
import type { AttestationRoute } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { untilProviderReceived } from "../../support/untilProviderReceived.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { startFakeStripe } from "../../support/fake-stripe.ts"
import { fundedKey } from "../../support/tenant.ts"
import { seal, sealInput } from "../../support/receipts.ts"
import { documentedErrors, UNIT_ONLY_CODES } from "../../support/errorCatalogue.ts"

/**
 * Every error code of docs/errors.md, provoked over HTTP on every route where it can occur, answers the documented
 * status, its code and a message a person can act on (issue 14: the relay answered every refusal with an empty
 * message because the error was rebuilt with an object spread). Codes no test can provoke over HTTP are covered by
 * the envelope unit test (UNIT_ONLY_CODES); a code added to docs/errors.md without a case here fails this file.
 */

const documented = documentedErrors()

/** Upstream delay for the in-flight duplicate (the duplicate waits 3 s) and the provider timeout above it. */
const SLOW_UPSTREAM_MS = 3_600
const fx = useRelayFixture({ PROVIDER_LOCAL_TIMEOUT_MS: "4500" })

/** A string that only ever appears in request bodies: no error message may echo it. */
const MARKER = "marker-5f2c9e"
const TOO_LARGE = 8 * 1024 * 1024 + 1

interface RelayRoute {
  readonly path: string
  readonly route: AttestationRoute
  readonly body: (model?: string) => string
  readonly model: string
  /** A catalogued model of a provider the test gateway has no key for. */
  readonly unconfiguredModel: string
  /** A scope that does not open this route. */
  readonly otherScope: string
}

const relayRoutes: ReadonlyArray<RelayRoute> = [
  {
    path: "/api/v1/chat/completions",
    route: "chat.completions",
    model: "local-chat",
    body: (model = "local-chat") => JSON.stringify({ model, messages: [{ role: "user", content: `Hello <EMAIL_1> ${MARKER}` }] }),
    unconfiguredModel: "gpt-4o",
    otherScope: "messages"
  },
  {
    path: "/api/v1/messages",
    route: "messages",
    model: "local-chat",
    body: (model = "local-chat") =>
      JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: `Hello <EMAIL_1> ${MARKER}` }] }),
    unconfiguredModel: "claude-haiku-4-5-20251001",
    otherScope: "completions"
  },
  {
    path: "/api/v1/responses",
    route: "responses",
    model: "local-chat",
    body: (model = "local-chat") => JSON.stringify({ model, input: `Hello <EMAIL_1> ${MARKER}` }),
    unconfiguredModel: "gpt-4o",
    otherScope: "messages"
  },
  {
    path: "/api/v1/embeddings",
    route: "embeddings",
    model: "local-embed",
    body: (model = "local-embed") => JSON.stringify({ model, input: `Hello <EMAIL_1> ${MARKER}` }),
    unconfiguredModel: "text-embedding-3-small",
    otherScope: "messages"
  }
]

const send = (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${fx.gw.url}${path}`, { method, headers: { "content-type": "application/json", ...init.headers }, body: init.body })

const relay = async (r: RelayRoute, apiKey: string | undefined, options: { body?: string; headers?: Record<string, string>; attest?: boolean } = {}) => {
  const body = options.body ?? r.body()
  const attestation = options.attest === false ? {} : await attestedHeaders(r.route, body)
  return send("POST", r.path, {
    body,
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...attestation, ...options.headers }
  })
}

const portalToken = async (orgId: string, abilities: string) =>
  (await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }))).token as string

/** One provocation: the code, where, and how. `failedReceipt`: the key was accepted, so the refusal carries a failed-call receipt. */
interface Case {
  readonly code: string
  readonly where: string
  readonly provoke: () => Promise<Response>
  readonly failedReceipt?: boolean
}

const relayCases = (r: RelayRoute): Array<Case> => {
  const where = `POST ${r.path}`
  const keyed = (code: string, provoke: () => Promise<Response>): Case => ({ code, where, provoke, failedReceipt: true })
  return [
    { code: "invalid_key", where, provoke: () => relay(r, undefined) },
    {
      code: "key_revoked",
      where,
      provoke: async () => {
        const { apiKey, keyPrefix } = await fundedKey(fx.gw)
        await fx.gw.runtime.runPromise(revokeKey({ key_prefix: keyPrefix }, "test"))
        return relay(r, apiKey)
      }
    },
    {
      code: "key_expired",
      where,
      provoke: async () => {
        const apiKey = await demoKey()
        await fx.gw.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_prefix = $1", apiKey.slice(0, 10))
        return relay(r, apiKey)
      }
    },
    keyed("insufficient_scope", async () => {
      const { apiKey, keyPrefix } = await fundedKey(fx.gw)
      await fx.gw.query(`UPDATE api_keys SET permissions = $1::jsonb WHERE key_prefix = $2`, JSON.stringify([r.otherScope]), keyPrefix)
      return relay(r, apiKey)
    }),
    keyed("engine_untrusted", async () => {
      const { apiKey } = await fundedKey(fx.gw)
      const body = r.body()
      const { "x-service-attestation": attestation } = await attestedHeaders(r.route, body)
      return relay(r, apiKey, { body, attest: false, headers: { "x-service-attestation": attestation } })
    }),
    keyed("pretokenised_required", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { attest: false, headers: { "x-service-engine": "relay-ts/0.1.0" } })),
    keyed("invalid_request", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { body: JSON.stringify({ model: 7, note: MARKER }) })),
    keyed("egress_policy_violation", async () =>
      relay(r, (await fundedKey(fx.gw)).apiKey, { body: JSON.stringify({ ...JSON.parse(r.body()), x_unlisted: MARKER }) })),
    keyed("invalid_idempotency_key", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { headers: { "idempotency-key": "k".repeat(129) } })),
    keyed("idempotency_key_conflict", async () => {
      const { apiKey } = await fundedKey(fx.gw)
      const headers = { "idempotency-key": crypto.randomUUID() }
      expect((await relay(r, apiKey, { headers })).status).toBe(200)
      return relay(r, apiKey, { headers, body: r.body().replace(MARKER, `${MARKER}-changed`) })
    }),
    keyed("idempotency_in_flight", async () => {
      const { apiKey } = await fundedKey(fx.gw)
      const headers = { "idempotency-key": crypto.randomUUID() }
      const body = r.body()
      fx.provider.setBehaviour({ kind: "delay", ms: SLOW_UPSTREAM_MS })
      const forwardedBefore = fx.provider.received.length
      const original = relay(r, apiKey, { headers, body })
      // The duplicate must find the original in flight: wait until the original reached the provider.
      await untilProviderReceived(fx.provider, forwardedBefore + 1)
      const duplicate = await relay(r, apiKey, { headers, body })
      expect((await original).status).toBe(200)
      return duplicate
    }),
    keyed("model_not_allowed", async () => {
      const { apiKey, keyPrefix } = await fundedKey(fx.gw)
      await fx.gw.query(`UPDATE api_keys SET models = '["some-other-model"]'::jsonb WHERE key_prefix = $1`, keyPrefix)
      return relay(r, apiKey)
    }),
    keyed("model_not_found", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { body: r.body("no-such-model") })),
    keyed("provider_not_configured", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { body: r.body(r.unconfiguredModel) })),
    keyed("rate_limited", async () => {
      const { apiKey, orgId } = await fundedKey(fx.gw)
      await fx.gw.query(`INSERT INTO org_limits (org_id, capability, per60) VALUES ($1, '*', 1)`, orgId)
      expect((await relay(r, apiKey)).status).toBe(200)
      return relay(r, apiKey)
    }),
    keyed("quota_exceeded", async () => {
      const { apiKey, orgId } = await fundedKey(fx.gw)
      await fx.gw.query(`INSERT INTO org_limits (org_id, capability, monthly_tokens) VALUES ($1, '*', 0)`, orgId)
      return relay(r, apiKey)
    }),
    keyed("insufficient_balance", async () => relay(r, (await fundedKey(fx.gw, "0")).apiKey)),
    keyed("payload_too_large", async () => relay(r, (await fundedKey(fx.gw)).apiKey, { body: MARKER.padEnd(TOO_LARGE, "x"), attest: false })),
    keyed("upstream_error", async () => {
      const { apiKey } = await fundedKey(fx.gw)
      fx.provider.setBehaviour({ kind: "status", status: 500, body: { error: { message: MARKER } } })
      return relay(r, apiKey)
    }),
    keyed("upstream_timeout", async () => {
      const { apiKey } = await fundedKey(fx.gw)
      fx.provider.setBehaviour({ kind: "hang" })
      return relay(r, apiKey)
    })
  ]
}

/** Portal routes of each family, with the ability each needs. */
const portalRoutes: ReadonlyArray<readonly [string, string, string]> = [
  ["GET", "/api/v1/billing/balance", "ability:billing.read"],
  ["GET", "/api/v1/keys", "ability:keys.read"],
  ["POST", "/api/keys", "ability:keys.write"],
  ["GET", "/api/v1/webhooks/deliveries", "webhooks.read"],
  ["PUT", "/api/v1/byok/openai", "ability:byok.write"]
]

let network = 0
const selfService = (body: unknown, ip: string) =>
  send("POST", "/api/v1/self-service/key", { body: JSON.stringify(body), headers: { "x-forwarded-for": ip } })

/** An anonymous demo key, each from its own pretend network (two per network per day). */
const demoKey = async () => {
  const res = await send("POST", "/api/v1/demo/key", { headers: { "x-forwarded-for": `198.22.${Math.floor(++network / 250)}.${network % 250}` } })
  expect(res.status).toBe(201)
  return (await res.json()).api_key as string
}

const otherCases: Array<Case> = [
  {
    code: "demo_key_restricted",
    where: "POST /api/v1/receipts/countersign",
    provoke: async () => send("POST", "/api/v1/receipts/countersign", { body: JSON.stringify({ note: MARKER }), headers: { authorization: `Bearer ${await demoKey()}` } })
  },
  ...["/api/v1/nope", "/api/v1/tokenize", "/api/v1/detect", "/api/v1/detokenize", "/api/v1/reconstruct"].map((path): Case => ({
    code: "not_found",
    where: `POST ${path}`,
    provoke: () => send("POST", path, { body: JSON.stringify({ text: MARKER }) })
  })),
  {
    code: "not_found",
    where: "GET /api/v1/receipts/{jti}",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("GET", `/api/v1/receipts/${"0".repeat(32)}`, { headers: { authorization: `Bearer ${await portalToken(orgId, "ability:keys.read")}` } })
    }
  },
  {
    code: "invalid_request",
    where: "POST /api/v1/self-service/key",
    provoke: () => selfService(MARKER, `198.19.1.${++network}`)
  },
  {
    code: "invalid_request",
    where: "POST /api/keys",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("POST", "/api/keys", {
        body: JSON.stringify({ name: MARKER, permissions: ["no-such-scope"] }),
        headers: { authorization: `Bearer ${await portalToken(orgId, "ability:keys.write")}` }
      })
    }
  },
  { code: "invalid_payload", where: "POST /api/v1/receipts/verify", provoke: () => send("POST", "/api/v1/receipts/verify", { body: JSON.stringify({ note: MARKER }) }) },
  { code: "invalid_request", where: "GET /api/v1/transparency/consistency (first is not a size)", provoke: () => send("GET", `/api/v1/transparency/consistency?first=${MARKER}`) },
  { code: "tree_size_out_of_range", where: "GET /api/v1/transparency/consistency (from the empty tree)", provoke: () => send("GET", "/api/v1/transparency/consistency?first=0") },
  { code: "auth_required", where: "POST /api/v1/receipts/verify", provoke: () => send("POST", "/api/v1/receipts/verify", { body: JSON.stringify({ jti: "0".repeat(32) }) }) },
  { code: "auth_required", where: "GET /api/v1/receipts/{jti}", provoke: () => send("GET", `/api/v1/receipts/${"0".repeat(32)}`) },
  { code: "auth_required", where: "GET /api/v1/receipts", provoke: () => send("GET", "/api/v1/receipts") },
  ...portalRoutes.flatMap(([method, path, ability]): Array<Case> => [
    {
      code: "portal_auth_required",
      where: `${method} ${path}`,
      provoke: async () => send(method, path, { body: method === "GET" ? undefined : "{}", headers: { authorization: `Bearer ${(await fundedKey(fx.gw)).apiKey}` } })
    },
    {
      code: "insufficient_ability",
      where: `${method} ${path}`,
      provoke: async () => {
        const { orgId } = await fundedKey(fx.gw)
        const other = ability === "ability:billing.read" ? "ability:keys.read" : "ability:billing.read"
        return send(method, path, { body: method === "GET" ? undefined : "{}", headers: { authorization: `Bearer ${await portalToken(orgId, other)}` } })
      }
    }
  ]),
  {
    code: "account_exists",
    where: "POST /api/v1/self-service/key",
    provoke: async () => {
      const email = `taken-${crypto.randomUUID()}@example.com`
      expect((await selfService({ email }, `198.19.2.${++network}`)).status).toBe(201)
      return selfService({ email }, `198.19.2.${++network}`)
    }
  },
  {
    code: "rate_limited",
    where: "POST /api/v1/self-service/key",
    provoke: async () => {
      const ip = `198.19.3.${++network}`
      for (let i = 0; i < 5; i++) expect((await selfService({}, ip)).status).toBe(201)
      return selfService({}, ip)
    }
  },
  {
    code: "payload_too_large",
    where: "POST /api/v1/receipts/verify",
    provoke: () => send("POST", "/api/v1/receipts/verify", { body: MARKER.padEnd(TOO_LARGE, "x") })
  },
  {
    code: "payload_too_large",
    where: "POST /api/keys",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("POST", "/api/keys", { body: MARKER.padEnd(TOO_LARGE, "x"), headers: { authorization: `Bearer ${await portalToken(orgId, "ability:keys.write")}` } })
    }
  },
  {
    code: "invalid_idempotency_key",
    where: "POST /api/keys",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("POST", "/api/keys", {
        body: "{}",
        headers: { authorization: `Bearer ${await portalToken(orgId, "ability:keys.write")}`, "idempotency-key": "k".repeat(129) }
      })
    }
  },
  {
    code: "idempotency_key_conflict",
    where: "POST /api/keys",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const headers = { authorization: `Bearer ${await portalToken(orgId, "ability:keys.write")}`, "idempotency-key": crypto.randomUUID() }
      expect((await send("POST", "/api/keys", { body: JSON.stringify({ name: "a" }), headers })).status).toBe(201)
      return send("POST", "/api/keys", { body: JSON.stringify({ name: MARKER }), headers })
    }
  }
]

/** A signed-up account (password set) from its own pretend network; resolves with its sign-in body. */
const signUp = async () => {
  const body = { email: `user-${crypto.randomUUID()}@example.com`, password: "correct horse battery staple" }
  const res = await send("POST", "/api/v1/accounts", { body: JSON.stringify(body), headers: { "x-forwarded-for": `198.23.${Math.floor(++network / 250)}.${network % 250}` } })
  expect(res.status).toBe(201)
  return body
}

/** The token of the newest verification link the development outbox holds for this address. */
const verificationToken = async (email: string) => {
  const mails = await fx.gw.query<{ body_text: string }>("SELECT body_text FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id DESC", email)
  const token = /\/api\/v1\/account\/verify\?token=([A-Za-z0-9_-]+)/.exec(mails[0]?.body_text ?? "")?.[1]
  if (token === undefined) throw new Error(`no verification link was mailed to ${email}`)
  return token
}

const login = (body: unknown) => send("POST", "/api/v1/portal/login", { body: JSON.stringify(body), headers: { "x-forwarded-for": `198.24.${Math.floor(++network / 250)}.${network % 250}` } })

/** A v3 attestation of `body` (the X-Service-Attestation value) and the body's hash as the relay would relay it. */
const attestationFor = async (body: string) => {
  const header = (await attestedHeaders("chat.completions", body))["x-service-attestation"]
  const attestation = JSON.parse(Buffer.from(header, "base64").toString("utf8"))
  return { header, attestation, hash: attestation.claims["v3-attestation"].egress_sha256 as string }
}

const countersign = async (request: Record<string, unknown>) =>
  send("POST", "/api/v1/receipts/countersign", { body: JSON.stringify(request), headers: { authorization: `Bearer ${(await fundedKey(fx.gw)).apiKey}` } })

/** Feature codes documented in docs/errors.md beside their own docs (accounts, portal, billing, keys, webhooks, receipts). */
const featureCases: Array<Case> = [
  {
    code: "tool_not_supported",
    where: "POST /api/v1/responses",
    failedReceipt: true,
    provoke: async () =>
      relay(relayRoutes.find((r) => r.route === "responses")!, (await fundedKey(fx.gw)).apiKey, {
        body: JSON.stringify({ model: "local-chat", input: `Find ${MARKER}`, tools: [{ type: "web_search" }] })
      })
  },
  {
    code: "url_not_allowed",
    where: "POST /api/v1/webhooks/endpoints",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("POST", "/api/v1/webhooks/endpoints", {
        body: JSON.stringify({ url: "https://169.254.169.254/latest", events: ["*"] }),
        headers: { authorization: `Bearer ${await portalToken(orgId, "webhooks.manage")}` }
      })
    }
  },
  { code: "invalid_credentials", where: "POST /api/v1/portal/login", provoke: () => login({ email: `ghost-${MARKER}@example.com`, password: `wrong ${MARKER}` }) },
  {
    code: "not_a_member",
    where: "POST /api/v1/portal/login",
    provoke: async () => login({ ...(await signUp()), org_id: (await fundedKey(fx.gw)).orgId })
  },
  {
    code: "csrf_failed",
    where: "POST /api/keys (portal session cookie)",
    provoke: async () => {
      const signedIn = await login(await signUp())
      expect(signedIn.status).toBe(200)
      const jar = signedIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
      return send("POST", "/api/keys", { body: JSON.stringify({ name: MARKER }), headers: { cookie: jar } })
    }
  },
  {
    code: "attestation_invalid",
    where: "POST /api/v1/receipts/countersign",
    provoke: async () => {
      const { attestation, hash } = await attestationFor(JSON.stringify({ model: "local-chat", note: MARKER }))
      return countersign({ attestation: { ...attestation, iat: attestation.iat + 1 }, provider: "local", model: "local-chat", hash_upstream_request: hash, hash_upstream_response: "9".repeat(64) })
    }
  },
  {
    code: "attestation_mismatch",
    where: "POST /api/v1/receipts/countersign",
    provoke: async () => {
      const { header } = await attestationFor(JSON.stringify({ model: "local-chat", note: MARKER }))
      return countersign({ attestation: header, provider: "local", model: "local-chat", hash_upstream_request: "8".repeat(64), hash_upstream_response: "9".repeat(64) })
    }
  },
  {
    code: "invalid_licence",
    where: "POST /api/billing/redeem-license",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("POST", "/api/billing/redeem-license", { body: JSON.stringify({ code: `PRL1.${MARKER}.AA` }), headers: { authorization: `Bearer ${await portalToken(orgId, "ability:billing.write")}` } })
    }
  },
  {
    code: "licence_already_redeemed",
    where: "POST /api/v1/billing/redeem-license",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const headers = { authorization: `Bearer ${await portalToken(orgId, "ability:billing.write")}` }
      const { code } = await fx.gw.runtime.runPromise(createLicence({ usd: "1" }))
      expect((await send("POST", "/api/v1/billing/redeem-license", { body: JSON.stringify({ code }), headers })).status).toBe(200)
      return send("POST", "/api/v1/billing/redeem-license", { body: JSON.stringify({ code }), headers })
    }
  },
  {
    code: "sso_rejected",
    where: "GET /api/v1/portal/sso/{org_id}/oidc/callback (no sign-in started in this browser)",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("GET", `/api/v1/portal/sso/${orgId}/oidc/callback?code=${MARKER}&state=${MARKER}`)
    }
  },
  {
    code: "sso_not_configured",
    where: "GET /api/admin/sso",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      return send("GET", `/api/admin/sso?org_id=${orgId}`, { headers: { authorization: `Bearer ${await portalToken(orgId, "ability:admin")}` } })
    }
  },
  {
    code: "key_not_active",
    where: "PATCH /api/keys/{id}",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const headers = { authorization: `Bearer ${await portalToken(orgId, "ability:keys.write")}` }
      const { id } = await (await send("POST", "/api/keys", { body: JSON.stringify({ name: "to revoke" }), headers })).json()
      expect((await send("POST", `/api/keys/${id}/revoke`, { body: "{}", headers })).status).toBe(200)
      return send("PATCH", `/api/keys/${id}`, { body: JSON.stringify({ name: MARKER }), headers })
    }
  },
  {
    code: "nested_sub_organisation",
    where: "POST /api/v1/orgs",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const parent = await send("POST", "/api/v1/orgs", { body: JSON.stringify({ name: "sub" }), headers: { authorization: `Bearer ${await portalToken(orgId, "abilities:write")}` } })
      expect(parent.status).toBe(201)
      const sub = (await parent.json()).org_id
      return send("POST", "/api/v1/orgs", { body: JSON.stringify({ name: MARKER }), headers: { authorization: `Bearer ${await portalToken(sub, "abilities:write")}` } })
    }
  },
  {
    code: "already_member",
    where: "POST /api/v1/orgs/{id}/members",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const headers = { authorization: `Bearer ${await portalToken(orgId, "abilities:write")}` }
      const body = JSON.stringify({ email: `member-${crypto.randomUUID()}@example.com` })
      expect((await send("POST", `/api/v1/orgs/${orgId}/members`, { body, headers })).status).toBe(201)
      return send("POST", `/api/v1/orgs/${orgId}/members`, { body, headers })
    }
  },
  { code: "verification_link_invalid", where: "GET /api/v1/account/verify", provoke: () => send("GET", `/api/v1/account/verify?token=${MARKER}`) },
  {
    code: "verification_link_used",
    where: "GET /api/v1/account/verify (second time)",
    provoke: async () => {
      const token = await verificationToken((await signUp()).email)
      expect((await send("GET", `/api/v1/account/verify?token=${token}`)).status).toBe(200)
      return send("GET", `/api/v1/account/verify?token=${token}`)
    }
  },
  {
    code: "verification_link_expired",
    where: "POST /api/v1/account/verify (past its expiry)",
    provoke: async () => {
      const { email } = await signUp()
      const token = await verificationToken(email)
      await fx.gw.query(
        "UPDATE email_verifications SET expires_at = now() - interval '1 minute' WHERE account_id = (SELECT id FROM accounts WHERE lower(email) = lower($1))",
        email
      )
      return send("POST", "/api/v1/account/verify", { body: JSON.stringify({ token }) })
    }
  }
]

/**
 * A second gateway set up the way some deployments are, for the codes that only such a set-up answers: no payment
 * provider, an SMTP server that does not answer, and the receipt key from RECEIPT_SIGNING_KEY_FILE.
 */
const other = {} as { gw: TestGateway }
beforeAll(async () => {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", () => resolve()))
  const smtpPort = (closed.address() as { port: number }).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const { privateKey } = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])
  const keyFile = join(mkdtempSync(join(tmpdir(), "pr-receipt-key-")), "receipt-key.jwk")
  writeFileSync(keyFile, JSON.stringify(await crypto.subtle.exportKey("jwk", privateKey)), { mode: 0o600 })
  other.gw = await startTestGateway({
    PAYMENTS_PROVIDER: "",
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    RECEIPT_SIGNING_KEY_FILE: keyFile,
    // An empty build directory: the portal has not been built on this deployment.
    PORTAL_DIR: mkdtempSync(join(tmpdir(), "pr-portal-unbuilt-"))
  })
})
afterAll(() => other.gw?.close())

/** A gateway configured for Stripe whose Stripe API no longer answers (the fake is closed): the payment codes. */
const stripeDown = {} as { gw: TestGateway }
beforeAll(async () => {
  const stripe = await startFakeStripe()
  await stripe.close()
  stripeDown.gw = await startTestGateway(stripe.env)
})
afterAll(() => stripeDown.gw?.close())

const sendTo = (gw: TestGateway, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${gw.url}${path}`, { method, headers: { "content-type": "application/json", ...init.headers }, body: init.body })

const tokenOn = async (gw: TestGateway, abilities: string) => {
  const { orgId } = await fundedKey(gw)
  return (await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }))).token as string
}

const deploymentCases: Array<Case> = [
  {
    code: "invalid_signature",
    where: "POST /api/v1/billing/webhooks/stripe (no Stripe-Signature)",
    provoke: () => sendTo(stripeDown.gw, "POST", "/api/v1/billing/webhooks/stripe", { body: JSON.stringify({ type: "checkout.session.completed", marker: MARKER }) })
  },
  {
    code: "payment_provider_error",
    where: "POST /api/v1/billing/topup (Stripe unreachable)",
    provoke: async () =>
      sendTo(stripeDown.gw, "POST", "/api/v1/billing/topup", { body: JSON.stringify({ amount_usd: "5.00" }), headers: { authorization: `Bearer ${await tokenOn(stripeDown.gw, "ability:billing.write")}` } })
  },
  {
    code: "portal_not_built",
    where: "GET /portal/ (no npm run portal:build)",
    provoke: () => sendTo(other.gw, "GET", "/portal/")
  },
  {
    code: "payments_not_configured",
    where: "POST /api/v1/billing/topup (no payment provider)",
    provoke: async () =>
      sendTo(other.gw, "POST", "/api/v1/billing/topup", { body: JSON.stringify({ amount_usd: "5.00" }), headers: { authorization: `Bearer ${await tokenOn(other.gw, "ability:billing.write")}` } })
  },
  {
    code: "mail_unavailable",
    where: "POST /api/v1/account/verification (SMTP server down)",
    provoke: async () => {
      // Sign-up itself succeeds with the mail server down (verification_email_sent: false); asking for the link fails.
      const email = `mail-${crypto.randomUUID()}@example.com`
      const signUp = await sendTo(other.gw, "POST", "/api/v1/accounts", {
        body: JSON.stringify({ email, password: `pw ${MARKER} long enough` }),
        headers: { "x-forwarded-for": `198.25.0.${++network % 250}` }
      })
      expect(signUp.status).toBe(201)
      return sendTo(other.gw, "POST", "/api/v1/account/verification", {
        body: JSON.stringify({ email }),
        headers: { "x-forwarded-for": `198.25.0.${++network % 250}` }
      })
    }
  },
  {
    code: "receipt_key_from_file",
    where: "POST /api/admin/receipts/keys/rotate (key from RECEIPT_SIGNING_KEY_FILE)",
    provoke: async () => sendTo(other.gw, "POST", "/api/admin/receipts/keys/rotate", { body: "{}", headers: { authorization: `Bearer ${await tokenOn(other.gw, "ability:admin")}` } })
  },
  {
    code: "email_not_verified",
    where: "POST /api/admin/accounts/operator (an unverified account)",
    provoke: async () => {
      const email = `unverified-${crypto.randomUUID().slice(0, 8)}@example.org`
      await send("POST", "/api/v1/accounts", { body: JSON.stringify({ email, password: "long enough password" }), headers: { "x-forwarded-for": "203.0.113.77" } })
      const a = await fundedKey(fx.gw)
      return send("POST", "/api/admin/accounts/operator", { body: JSON.stringify({ email, action: "grant" }), headers: { authorization: `Bearer ${await portalToken(a.orgId, "ability:admin")}` } })
    }
  },
  {
    code: "receipt_expired",
    where: "GET /api/v1/receipts/{jti} (removed by retention)",
    provoke: async () => {
      const { orgId } = await fundedKey(fx.gw)
      const sealed = await seal(fx.gw, sealInput(orgId))
      expect((await send("GET", "/api/v1/transparency/sth")).status).toBe(200) // sequences its leaf
      await fx.gw.query("UPDATE receipts_v1 SET created_at = now() - interval '3 days' WHERE jti = $1", sealed.jti)
      await fx.gw.query("UPDATE receipts_v2 SET created_at = now() - interval '3 days' WHERE jti = $1", sealed.jti)
      const applied = await send("POST", "/api/admin/retention/apply", { body: JSON.stringify({ days: 2 }), headers: { authorization: `Bearer ${await portalToken(orgId, "ability:admin")}` } })
      expect(applied.status).toBe(200)
      return send("GET", `/api/v1/receipts/${sealed.jti}`, { headers: { authorization: `Bearer ${await portalToken(orgId, "ability:keys.read")}` } })
    }
  },
  {
    code: "ambiguous_prefix",
    where: "POST /api/admin/keys/revoke",
    provoke: async () => {
      // Two keys with one prefix (30 random bits: rare, but the admin must not revoke the wrong one).
      const a = await fundedKey(fx.gw)
      const b = await fundedKey(fx.gw)
      await fx.gw.query("UPDATE api_keys SET key_prefix = $1 WHERE key_prefix = $2", a.keyPrefix, b.keyPrefix)
      return send("POST", "/api/admin/keys/revoke", { body: JSON.stringify({ key_prefix: a.keyPrefix }), headers: { authorization: `Bearer ${await portalToken(a.orgId, "ability:admin")}` } })
    }
  }
]

const cases: ReadonlyArray<Case> = [...relayRoutes.flatMap(relayCases), ...otherCases, ...featureCases, ...deploymentCases]

describe("the error catalogue (docs/errors.md) on every route", () => {
  it("has a case for every documented code (or an envelope unit test), and documents every code it provokes", () => {
    expect(documented.size).toBeGreaterThan(20)
    const covered = new Set([...cases.map((c) => c.code), ...UNIT_ONLY_CODES])
    expect([...documented.keys()].filter((code) => !covered.has(code))).toEqual([])
    expect([...covered].filter((code) => !documented.has(code))).toEqual([])
  })

  it.each(cases.map((c) => [c.code, c.where, c] as const))("%s on %s: documented status, code and a meaningful message", async (code, _where, c) => {
    fx.provider.reset()
    const res = await c.provoke()
    fx.provider.reset()
    const text = await res.text()
    expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status: documented.get(code) })
    const { error } = JSON.parse(text)
    expect(error.code).toBe(code)
    expect(typeof error.message).toBe("string")
    // meaningful: a sentence, not blank, not the bare code, not the envelope's fallback for a missing message
    expect(error.message.trim().length).toBeGreaterThanOrEqual(15)
    expect(error.message).not.toBe(code)
    expect(error.message).not.toMatch(/^Request refused \(/)
    expect(error.message).not.toContain(MARKER)
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    if (c.failedReceipt) expect(res.headers.get("x-service-receipt-failed")).not.toBeNull()
  })
})

afterAll(() => fx.provider?.reset())
