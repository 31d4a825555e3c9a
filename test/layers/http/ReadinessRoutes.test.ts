import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeRedis } from "../../support/fakeRedis.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

const readyz = async (gw: TestGateway) => {
  const res = await fetch(`${gw.url}/readyz`)
  return { status: res.status, body: await res.json() }
}

describe("GET /readyz with this run's storage", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
  })
  afterAll(() => gw.close())

  it("answers 200 ready once the database answers a query (and Redis a PING when configured); /healthz stays liveness", async () => {
    const { status, body } = await readyz(gw)
    expect(status).toBe(200)
    expect(body.status).toBe("ready")
    expect(body.checks.database).toMatchObject({ status: "ok" })
    expect(body.checks.database.latency_ms).toBeGreaterThanOrEqual(0)
    if (gw.storage.mode.shared === "redis") expect(body.checks.redis).toMatchObject({ status: "ok" })
    else expect(body.checks.redis).toEqual({ status: "not_configured", detail: "REDIS_URL unset: shared state is in-process (one node only)" })
    const health = await fetch(`${gw.url}/healthz`)
    expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { status: "ok" } })
  })
})

describe("GET /readyz when Redis goes away", () => {
  let redis: Awaited<ReturnType<typeof startFakeRedis>>
  let gw: TestGateway
  beforeAll(async () => {
    redis = await startFakeRedis()
    gw = await startTestGateway({ REDIS_URL: redis.url })
  })
  afterAll(async () => {
    await gw?.close()
    await redis?.close()
  })

  it("answers 503 not_ready naming the Redis check while it is down (database still ok), and 200 again once it is back", async () => {
    expect((await readyz(gw)).status).toBe(200)
    await redis.stop()
    const down = await readyz(gw)
    expect(down.status).toBe(503)
    expect(down.body.status).toBe("not_ready")
    expect(down.body.checks.database).toMatchObject({ status: "ok" })
    expect(down.body.checks.redis.status).toBe("fail")
    expect(down.body.checks.redis.detail).toMatch(/^Redis (is unreachable or refused the probe|did not answer within 2000 ms)$/)
    // /healthz is liveness only: the process still serves
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200)
    await redis.restart()
    let back = await readyz(gw)
    for (let i = 0; i < 50 && back.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      back = await readyz(gw)
    }
    expect(back).toMatchObject({ status: 200, body: { status: "ready", checks: { redis: { status: "ok" } } } })
  })
})
