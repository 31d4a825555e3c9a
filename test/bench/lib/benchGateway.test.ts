import { afterEach, describe, expect, it, vi } from "vitest"
import { benchChildEnv } from "../../../bench/lib/benchGateway.ts"

describe("benchChildEnv (the environment every bench child starts with)", () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it("drops what could point a server elsewhere or change it (storage, listen, bench, fake-provider, OpenTelemetry settings, NODE_OPTIONS), keeps the rest, and adds the caller's settings", () => {
    const dropped: Record<string, string> = {
      DATABASE_URL: "postgres://elsewhere/db",
      REDIS_URL: "redis://elsewhere",
      REDIS_PREFIX: "p:",
      DATA_DIR: "/tmp/other",
      HOST: "0.0.0.0",
      LOCAL_PROVIDER_URL: "http://elsewhere",
      BENCH_QUICK: "1",
      FAKE_PROVIDER_PORT: "9999",
      FRONT_CALLS: "10",
      NODE_OPTIONS: "--inspect"
    }
    for (const [k, v] of Object.entries(dropped)) vi.stubEnv(k, v)
    vi.stubEnv("PORT", "8080")
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector")
    vi.stubEnv("BENCHLIB_KEPT", "kept")

    const env = benchChildEnv({ PORT: "1234", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" })

    for (const k of Object.keys(dropped)) expect(env, k).not.toHaveProperty(k)
    expect(env.PATH).toBe(process.env.PATH)
    expect(env.BENCHLIB_KEPT).toBe("kept")
    expect(env.PORT).toBe("1234")
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://127.0.0.1:1")
  })

  it("leaves the caller's own environment untouched", () => {
    vi.stubEnv("BENCH_QUICK", "1")
    benchChildEnv({})
    expect(process.env.BENCH_QUICK).toBe("1")
  })
})
