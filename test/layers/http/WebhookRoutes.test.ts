import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { api, orgWithToken } from "../webhookTestKit.ts"

// A production-like gateway: no WEBHOOK_ALLOW_LOOPBACK, and no dispatcher in this process (WEBHOOK_DISPATCHER=off),
// so queued deliveries stay visible as `pending` and nothing leaves the machine.
let gw: TestGateway
let manager: { orgId: string; token: string }
let other: { orgId: string; token: string }
beforeAll(async () => {
  gw = await startTestGateway({ WEBHOOK_DISPATCHER: "off" })
  manager = await orgWithToken(gw, ["webhooks.manage"], "org A")
  other = await orgWithToken(gw, ["webhooks.manage"], "org B")
})
afterAll(() => gw.close())

const create = (token: string, body: unknown) => api(gw, token, "POST", "/api/v1/webhooks/endpoints", body)

describe("webhook endpoint management", () => {
  it("creates an endpoint, returns the whsec_ secret once, and stores it only encrypted", async () => {
    const res = await create(manager.token, { url: "https://hooks.example.com/in", events: ["key.*", "webhook.test"] })
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ url: "https://hooks.example.com/in", events: ["key.*", "webhook.test"], status: "active" })
    expect(Number.isInteger(res.json.id)).toBe(true)
    expect(res.json.secret).toMatch(/^whsec_[a-z2-7]{52}$/)
    const secret: string = res.json.secret

    const read = await api(gw, manager.token, "GET", `/api/v1/webhooks/endpoints/${res.json.id}`)
    expect(read.status).toBe(200)
    expect(read.json.secret).toBeUndefined()
    expect(read.json).toMatchObject({ id: res.json.id, status: "active", paused_reason: null })
    const list = await api(gw, manager.token, "GET", "/api/v1/webhooks/endpoints")
    expect(list.json.endpoints.map((e: { id: number }) => e.id)).toContain(res.json.id)
    expect(JSON.stringify(list.json)).not.toContain(secret)

    const rows = await gw.query<{ secret_envelope: string }>("SELECT secret_envelope FROM webhook_endpoints WHERE id = $1", res.json.id)
    expect(rows[0]!.secret_envelope).toMatch(/^aead1\./)
    expect(JSON.stringify(await gw.query("SELECT * FROM webhook_endpoints"), (_k, v) => (typeof v === "bigint" ? String(v) : v)))
      .not.toContain(secret.slice(6))
  })

  it("rotates the secret: a new whsec_ value, stored re-encrypted", async () => {
    const created = await create(manager.token, { url: "https://hooks.example.com/rotate", events: ["*"] })
    const before = await gw.query<{ secret_envelope: string }>("SELECT secret_envelope FROM webhook_endpoints WHERE id = $1", created.json.id)
    const rotated = await api(gw, manager.token, "POST", `/api/v1/webhooks/endpoints/${created.json.id}/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.json.secret).toMatch(/^whsec_/)
    expect(rotated.json.secret).not.toBe(created.json.secret)
    const after = await gw.query<{ secret_envelope: string }>("SELECT secret_envelope FROM webhook_endpoints WHERE id = $1", created.json.id)
    expect(after[0]!.secret_envelope).not.toBe(before[0]!.secret_envelope)
  })

  it("updates url and events with PATCH, and deletes with DELETE (then 404)", async () => {
    const created = await create(manager.token, { url: "https://hooks.example.com/a", events: ["key.created"] })
    const patched = await api(gw, manager.token, "PATCH", `/api/v1/webhooks/endpoints/${created.json.id}`, {
      url: "https://hooks.example.com/b",
      events: ["billing.*"]
    })
    expect(patched.status).toBe(200)
    expect(patched.json).toMatchObject({ url: "https://hooks.example.com/b", events: ["billing.*"] })
    const deleted = await api(gw, manager.token, "DELETE", `/api/v1/webhooks/endpoints/${created.json.id}`)
    expect(deleted.status).toBe(204)
    const gone = await api(gw, manager.token, "GET", `/api/v1/webhooks/endpoints/${created.json.id}`)
    expect(gone.status).toBe(404)
    expect(gone.json.error.code).toBe("not_found")
  })

  it("accepts catalogue names, * and namespace.*, and refuses unknown events with 400 invalid_request", async () => {
    expect((await create(manager.token, { url: "https://h.example.com/", events: ["*"] })).status).toBe(201)
    expect((await create(manager.token, { url: "https://h.example.com/", events: ["chain.*", "receipt.signed"] })).status).toBe(201)
    for (const events of [["key.creatd"], ["nope.*"], [], "key.created", [42]]) {
      const res = await create(manager.token, { url: "https://h.example.com/", events })
      expect(res.status, JSON.stringify(events)).toBe(400)
      expect(res.json.error.code).toBe("invalid_request")
      // A non-string entry is named by its index, as every documented body schema names array entries.
      expect(res.json.error.details.path).toBe(Array.isArray(events) && typeof events[0] === "number" ? "events[0]" : "events")
    }
    const unknownField = await create(manager.token, { url: "https://h.example.com/", events: ["*"], secret: "mine" })
    expect(unknownField.status).toBe(400)
    expect(unknownField.json.error.details.path).toBe("secret")
  })

  it("refuses plain http, credentials in the URL and every private, loopback, link-local or metadata literal", async () => {
    const refused = [
      ["http://hooks.example.com/in", "https_required"],
      ["http://127.0.0.1:9000/in", "https_required"],
      ["https://user:pw@hooks.example.com/", "credentials_in_url"],
      ["https://127.0.0.1/in", "loopback"],
      ["https://10.0.0.1/in", "private"],
      ["https://169.254.169.254/latest/meta-data", "metadata"],
      ["https://[::1]/in", "loopback"],
      ["https://[::ffff:127.0.0.1]/in", "ipv4_mapped:loopback"],
      ["https://0x7f000001/in", "loopback"],
      ["https://2130706433/in", "loopback"],
      ["https://192.168.1.10/in", "private"],
      ["https://100.64.0.1/in", "cgnat"],
      ["https://localhost/in", "loopback"],
      ["ftp://hooks.example.com/", "unsupported_scheme"]
    ] as const
    for (const [url, reason] of refused) {
      const res = await create(manager.token, { url, events: ["*"] })
      expect(res.status, url).toBe(400)
      expect(res.json.error.code, url).toBe("url_not_allowed")
      expect(res.json.error.reason, url).toBe(reason)
    }
    const patchTarget = await create(manager.token, { url: "https://hooks.example.com/p", events: ["*"] })
    const patch = await api(gw, manager.token, "PATCH", `/api/v1/webhooks/endpoints/${patchTarget.json.id}`, { url: "https://10.1.2.3/" })
    expect(patch.status).toBe(400)
    expect(patch.json.error.code).toBe("url_not_allowed")
    const count = await gw.query<{ n: string }>("SELECT count(*)::text AS n FROM webhook_endpoints WHERE url LIKE '%10.%' OR url LIKE '%127.%'")
    expect(count[0]!.n).toBe("0")
  })
})

describe("webhook abilities", () => {
  it("needs a portal token: 401 portal_auth_required without one", async () => {
    const res = await api(gw, undefined, "GET", "/api/v1/webhooks/endpoints")
    expect(res.status).toBe(401)
    expect(res.json.error.code).toBe("portal_auth_required")
  })

  it("lets webhooks.read list and read but not write (403 insufficient_ability)", async () => {
    const reader = await orgWithToken(gw, ["webhooks.read"])
    expect((await api(gw, reader.token, "GET", "/api/v1/webhooks/endpoints")).status).toBe(200)
    expect((await api(gw, reader.token, "GET", "/api/v1/webhooks/deliveries")).status).toBe(200)
    const write = await create(reader.token, { url: "https://hooks.example.com/", events: ["*"] })
    expect(write.status).toBe(403)
    expect(write.json.error).toMatchObject({ code: "insufficient_ability", required: ["webhooks.manage"] })
  })

  it("refuses a token with neither webhook ability, even for reads", async () => {
    const billing = await orgWithToken(gw, ["ability:billing.read"])
    const res = await api(gw, billing.token, "GET", "/api/v1/webhooks/deliveries")
    expect(res.status).toBe(403)
    expect(res.json.error).toMatchObject({ code: "insufficient_ability", required: ["webhooks.read"] })
  })
})

describe("test events, deliveries and replay (queued; no dispatcher in this gateway)", () => {
  it("queues a webhook.test delivery with event_id test-<uuid> and the spec's data fields", async () => {
    const endpoint = await create(manager.token, { url: "https://hooks.example.com/t", events: ["key.*"] })
    const res = await api(gw, manager.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.json.id}/test`)
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ endpoint_id: endpoint.json.id, event: "webhook.test", status: "pending", attempt_count: 0 })
    expect(res.json.event_id).toMatch(/^test-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const detail = await api(gw, manager.token, "GET", `/api/v1/webhooks/deliveries/${res.json.id}`)
    expect(detail.status).toBe(200)
    expect(detail.json.payload.event).toBe("webhook.test")
    expect(detail.json.payload.data.endpoint_id).toBe(endpoint.json.id)
    expect(new Date(detail.json.payload.data.sent_at).toISOString()).toBe(detail.json.payload.data.sent_at)
    expect(detail.json.attempts).toEqual([])
  })

  it("replays a delivery as a new row with event_id replay-<uuid>, keeping the original", async () => {
    const endpoint = await create(manager.token, { url: "https://hooks.example.com/r", events: ["*"] })
    const test = await api(gw, manager.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.json.id}/test`)
    const replay = await api(gw, manager.token, "POST", `/api/v1/webhooks/deliveries/${test.json.id}/replay`)
    expect(replay.status).toBe(201)
    expect(replay.json.id).not.toBe(test.json.id)
    expect(replay.json.event_id).toMatch(/^replay-[0-9a-f-]{36}$/)
    expect(replay.json).toMatchObject({ replay_of: test.json.id, event: "webhook.test", endpoint_id: endpoint.json.id, status: "pending" })
    const original = await api(gw, manager.token, "GET", `/api/v1/webhooks/deliveries/${test.json.id}`)
    const copy = await api(gw, manager.token, "GET", `/api/v1/webhooks/deliveries/${replay.json.id}`)
    expect(copy.json.payload.data).toEqual(original.json.payload.data)
    expect(original.json.event_id).toBe(test.json.event_id)
    const log = await api(gw, manager.token, "GET", `/api/v1/webhooks/deliveries?endpoint_id=${endpoint.json.id}`)
    expect(log.json.deliveries.map((d: { id: number }) => d.id)).toEqual([replay.json.id, test.json.id])
  })

  it("validates delivery log filters: 400 invalid_request for a bad limit or status", async () => {
    const badLimit = await api(gw, manager.token, "GET", "/api/v1/webhooks/deliveries?limit=abc")
    expect(badLimit.status).toBe(400)
    expect(badLimit.json.error).toMatchObject({ code: "invalid_request", details: { path: "limit" } })
    const badStatus = await api(gw, manager.token, "GET", "/api/v1/webhooks/deliveries?status=lost")
    expect(badStatus.status).toBe(400)
    expect(badStatus.json.error.details.path).toBe("status")
  })
})

describe("organisation isolation and 404s", () => {
  it("never shows or changes another organisation's endpoints or deliveries (404 not_found, like an unknown id)", async () => {
    const endpoint = await create(manager.token, { url: "https://hooks.example.com/private", events: ["*"] })
    const id = endpoint.json.id
    const test = await api(gw, manager.token, "POST", `/api/v1/webhooks/endpoints/${id}/test`)

    const list = await api(gw, other.token, "GET", "/api/v1/webhooks/endpoints")
    expect(list.json.endpoints.map((e: { id: number }) => e.id)).not.toContain(id)
    const deliveries = await api(gw, other.token, "GET", "/api/v1/webhooks/deliveries")
    expect(deliveries.json.deliveries.map((d: { id: number }) => d.id)).not.toContain(test.json.id)
    for (const [method, path, body] of [
      ["GET", `/api/v1/webhooks/endpoints/${id}`],
      ["PATCH", `/api/v1/webhooks/endpoints/${id}`, { events: ["*"] }],
      ["DELETE", `/api/v1/webhooks/endpoints/${id}`],
      ["POST", `/api/v1/webhooks/endpoints/${id}/rotate`],
      ["POST", `/api/v1/webhooks/endpoints/${id}/test`],
      ["POST", `/api/v1/webhooks/endpoints/${id}/resume`],
      ["GET", `/api/v1/webhooks/deliveries/${test.json.id}`],
      ["POST", `/api/v1/webhooks/deliveries/${test.json.id}/replay`]
    ] as const) {
      const res = await api(gw, other.token, method, path, body)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.json.error.code).toBe("not_found")
    }
    // Nothing changed for the owner.
    const still = await api(gw, manager.token, "GET", `/api/v1/webhooks/endpoints/${id}`)
    expect(still.json).toMatchObject({ id, events: ["*"], status: "active" })
    const rows = await gw.query<{ n: string }>("SELECT count(*)::text AS n FROM webhook_deliveries WHERE endpoint_id = $1", id)
    expect(rows[0]!.n).toBe("1")
  })

  it("answers 404 not_found for unknown and non-numeric ids", async () => {
    for (const path of [
      "/api/v1/webhooks/endpoints/999999999",
      "/api/v1/webhooks/endpoints/abc",
      "/api/v1/webhooks/endpoints/0",
      "/api/v1/webhooks/deliveries/999999999",
      "/api/v1/webhooks/deliveries/1e3"
    ]) {
      const res = await api(gw, manager.token, "GET", path)
      expect(res.status, path).toBe(404)
      expect(res.json.error.code).toBe("not_found")
    }
    const replay = await api(gw, manager.token, "POST", "/api/v1/webhooks/deliveries/999999999/replay")
    expect(replay.status).toBe(404)
  })
})
