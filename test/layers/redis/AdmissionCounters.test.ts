import { Effect, Layer, ManagedRuntime } from "effect"
import { type Command, Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AdmissionCountersRedis } from "../../../layers/redis/AdmissionCounters.ts"
import { makeAdmission } from "../../../layers/redis/admitScript.ts"
import { QuotasRedis } from "../../../layers/redis/Quotas.ts"
import { RedisClient } from "../../../layers/redis/RedisClient.ts"
import { AdmissionCounters } from "../../../services/AdmissionCounters.ts"
import { AppConfig } from "../../../services/AppConfig.ts"
import { Quotas } from "../../../services/Quotas.ts"
import { admissionCountersContract } from "../../support/admissionCountersContract.ts"
import { createTestStorage, type TestStorage } from "../../support/databases.ts"

const redisUrl = process.env.REDIS_URL

// Runs only with REDIS_URL (CI's Postgres+Redis set-up); the in-process equivalent is test/layers/memory.
describe.skipIf(redisUrl === undefined)("AdmissionCountersRedis", () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage.drop()
  })

  // One gateway node's view: its own Redis connection on the suite's key prefix.
  const nodeLayer = () =>
    Layer.mergeAll(AdmissionCountersRedis, QuotasRedis).pipe(
      Layer.provide(RedisClient.layer),
      Layer.provide(AppConfig.fromEnv({ ...storage.env, LOG_LEVEL: "error" }))
    )

  admissionCountersContract(nodeLayer)

  it("two nodes share the counters: tokens one adds refuse the other's next call", async () => {
    const a = ManagedRuntime.make(nodeLayer())
    const b = ManagedRuntime.make(nodeLayer())
    try {
      const quota = { orgId: `org_${crypto.randomUUID().slice(0, 8)}`, capability: "chat", month: "2030-03", limit: 10 }
      const windows = [{ key: `shared:${quota.orgId}`, windowMs: 60_000, limit: 100 }]
      const admit = (rt: typeof a) => rt.runPromise(Effect.flatMap(Effect.service(AdmissionCounters), (c) => c.admit({ quota, windows })))
      expect(await admit(a)).toMatchObject({ _tag: "Counted", used: 0, windows: [{ count: 1 }] })
      expect(await admit(b)).toMatchObject({ _tag: "Counted", used: 0, windows: [{ count: 2 }] })
      await a.runPromise(Effect.flatMap(Effect.service(Quotas), (q) => q.add(quota.orgId, "chat", quota.month, 10)))
      expect(await admit(b)).toEqual({ _tag: "QuotaExceeded", used: 10 })
      expect(await admit(a)).toEqual({ _tag: "QuotaExceeded", used: 10 })
    } finally {
      await a.dispose()
      await b.dispose()
    }
  })

  it("one command per admission: the script text once per connection, then EVALSHA, and again after SCRIPT FLUSH", async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true })
    await redis.connect()
    const sent: Array<Command> = []
    const send = redis.sendCommand.bind(redis)
    redis.sendCommand = ((command: Command, ...rest: Array<unknown>) => {
      sent.push(command)
      return (send as (...args: Array<unknown>) => unknown)(command, ...rest)
    }) as typeof redis.sendCommand
    try {
      const { admit } = makeAdmission(redis, storage.env.REDIS_PREFIX)
      const quota = { key: "quota:script-test", limit: 1_000 }
      const windows = [{ key: "script-test", windowMs: 60_000, limit: 1_000 }]
      const names = async () => {
        sent.length = 0
        expect(await admit({ quota, windows })).toMatchObject({ _tag: "Counted" })
        return sent.map((c) => c.name)
      }
      expect(await names()).toEqual(["eval"])
      expect(await names()).toEqual(["evalsha"])
      expect(await names()).toEqual(["evalsha"])
      // The server forgot the script (restart, SCRIPT FLUSH): EVALSHA fails with NOSCRIPT and ioredis sends the text.
      await redis.script("FLUSH")
      const afterFlush = await names()
      expect(afterFlush.at(-1)).toBe("eval")
      expect(await names()).toEqual(["evalsha"])
    } finally {
      await redis.quit()
    }
  })
})
