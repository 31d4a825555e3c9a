import { Layer } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { RedisClient } from "../../../layers/redis/RedisClient.ts"
import { SlotsRedis } from "../../../layers/redis/Slots.ts"
import { AppConfig } from "../../../services/AppConfig.ts"
import { createTestStorage, type TestStorage } from "../../support/databases.ts"
import { slotsContract } from "../../support/slotsContract.ts"

// Runs only with REDIS_URL (CI's Postgres+Redis set-up); the in-process equivalent is test/layers/memory.
describe.skipIf(process.env.REDIS_URL === undefined)("SlotsRedis", () => {
  let storage: TestStorage
  beforeAll(async () => {
    storage = await createTestStorage()
  })
  afterAll(async () => {
    await storage.drop()
  })

  slotsContract(() =>
    SlotsRedis.pipe(Layer.provide(RedisClient.layer), Layer.provide(AppConfig.fromEnv({ ...storage.env, LOG_LEVEL: "error" })))
  )
})
