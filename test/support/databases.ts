import { Redis } from "ioredis"
import { createConnection } from "node:net"

/**
 * Storage for one test gateway: a fresh PostgreSQL database when DATABASE_URL is set (CI), in-memory PGlite
 * otherwise; a fresh Redis key prefix when REDIS_URL is set, in-process state otherwise.
 */
export interface TestStorage {
  readonly env: Record<string, string>
  readonly mode: { readonly sql: "postgres" | "pglite"; readonly shared: "redis" | "memory" }
  readonly drop: () => Promise<void>
}

const random = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12)

/** Runs one statement over a raw pg connection to the maintenance database (CREATE/DROP DATABASE). */
const adminQuery = async (databaseUrl: string, statement: string) => {
  const { default: pgClient } = await import("./pgSimpleQuery.ts")
  await pgClient(databaseUrl, statement)
}

export const createTestStorage = async (): Promise<TestStorage> => {
  const databaseUrl = process.env.DATABASE_URL
  const redisUrl = process.env.REDIS_URL
  const env: Record<string, string> = { DATA_DIR: ":memory:" }
  let dropDatabase = async () => {}
  if (databaseUrl) {
    const name = `pr_test_${random()}`
    await adminQuery(databaseUrl, `CREATE DATABASE ${name}`)
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    env.DATABASE_URL = url.toString()
    dropDatabase = () => adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {})
  }
  let dropRedis = async () => {}
  if (redisUrl) {
    const prefix = `pr_test_${random()}:`
    env.REDIS_URL = redisUrl
    env.REDIS_PREFIX = prefix
    dropRedis = async () => {
      const redis = new Redis(redisUrl, { lazyConnect: true })
      await redis.connect()
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
      await redis.quit()
    }
  }
  return {
    env,
    mode: { sql: databaseUrl ? "postgres" : "pglite", shared: redisUrl ? "redis" : "memory" },
    drop: async () => {
      await dropDatabase()
      await dropRedis()
    }
  }
}

/** True when something listens on host:port (used to skip nothing: only to report what CI set up). */
export const isListening = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host, port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })
