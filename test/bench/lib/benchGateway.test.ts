import { afterEach, describe, expect, it, vi } from "vitest"
import { benchChildEnv } from "../../../bench/lib/benchGateway.ts"

describe("benchChildEnv (the environment every bench child starts with)", () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it("drops what could point a server elsewhere or change it (storage, listen, bench, fake-provider, OpenTelemetry settings, NODE_OPTIONS), keeps the rest, and adds the caller's settings", () => {
    vi.stubEnv("DATABASE_URL", "postgres://elsewhere/db")
    vi.stubEnv("REDIS_URL", "redis://elsewhere")
    vi.stubEnv("REDIS_PREFIX", "p:")
    vi.stubEnv("DATA_DIR", "/tmp/other")
    vi.stubEnv("PORT", "8080")
    vi.stubEnv("HOST", "0.0.0.0")
    vi.stubEnv("LOCAL_PROVIDER_URL", "http://elsewhere")
    vi.stubEnv("BENCH_QUICK", "1")
    vi.stubEnv("FAKE_PROVIDER_PORT", "9999")
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector")
    vi.stubEnv("FRONT_CALLS", "10")
    vi.stubEnv("NODE_OPTIONS", "--inspect")
    vi.stubEnv("BENCHLIB_KEPT", "kept")

    const env = benchChildEnv({ PORT: "1234", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" })

    for (const dropped of ["DATABASE_URL", "REDIS_URL", "REDIS_PREFIX", "DATA_DIR", "HOST", "LOCAL_PROVIDER_URL", "BENCH_QUICK", "FAKE_PROVIDER_PORT", "FRONT_CALLS", "NODE_OPTIONS"]) {
      expect(env, dropped).not.toHaveProperty(dropped)
    }
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
