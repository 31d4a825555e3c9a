import { describe, expect, it } from "vitest"
import {
  checkEngineAllowlist,
  DEFAULT_ENGINE_ALLOWLIST,
  engineHeaderValue,
  parseEngineHeader
} from "../../../../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"

describe("engine allowlist gate", () => {
  it("formats and parses X-Service-Engine as <id>/<semver>", () => {
    expect(engineHeaderValue({ id: "relay-ts", version: "1.0.0" })).toBe("relay-ts/1.0.0")
    expect(parseEngineHeader("relay-ts/1.0.0")).toEqual({ id: "relay-ts", version: "1.0.0" })
    expect(parseEngineHeader("relay-ts")).toBeUndefined()
    expect(parseEngineHeader("relay-ts/1.0")).toBeUndefined()
    expect(parseEngineHeader("/1.0.0")).toBeUndefined()
  })

  it("accepts relay-ts from 0.1.0 by default", () => {
    expect(checkEngineAllowlist("relay-ts/0.1.0", DEFAULT_ENGINE_ALLOWLIST).ok).toBe(true)
    expect(checkEngineAllowlist("relay-ts/0.10.2", DEFAULT_ENGINE_ALLOWLIST).ok).toBe(true)
  })

  it("accepts relay-py (the Python SDK's engine) from its first version 0.1.0, and refuses it below", () => {
    expect(checkEngineAllowlist("relay-py/0.1.0", DEFAULT_ENGINE_ALLOWLIST).ok).toBe(true)
    expect(checkEngineAllowlist("relay-py/1.2.3", DEFAULT_ENGINE_ALLOWLIST).ok).toBe(true)
    const old = checkEngineAllowlist("relay-py/0.0.9", DEFAULT_ENGINE_ALLOWLIST)
    expect(old.ok).toBe(false)
    if (!old.ok) expect(old.message).toMatch(/older than the minimum 0\.1\.0/)
  })

  it("accepts the Rust engine and the SDKs on its C ABI (relay-rs, relay-go, relay-java, relay-php, relay-rb) from 0.1.0", () => {
    for (const id of ["relay-rs", "relay-go", "relay-java", "relay-php", "relay-rb"]) {
      expect(checkEngineAllowlist(`${id}/0.1.0`, DEFAULT_ENGINE_ALLOWLIST).ok).toBe(true)
      const old = checkEngineAllowlist(`${id}/0.0.1`, DEFAULT_ENGINE_ALLOWLIST)
      expect(old.ok).toBe(false)
    }
  })

  it("refuses a missing, malformed, unknown or too old engine with a message naming why", () => {
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /missing/],
      ["  ", /missing/],
      ["relay-ts", /form/],
      ["relay-cobol/9.0.0", /not an official/],
      ["relay-ts/0.0.9", /older than the minimum 0\.1\.0/],
      ["relay-ts/0.1.0-rc.1", /older than the minimum/]
    ]
    for (const [header, message] of cases) {
      const decision = checkEngineAllowlist(header, DEFAULT_ENGINE_ALLOWLIST)
      expect(decision.ok).toBe(false)
      if (!decision.ok) expect(decision.message).toMatch(message)
    }
  })

  it("fails closed when the configured minimum is not a semver", () => {
    expect(checkEngineAllowlist("relay-ts/5.0.0", [{ id: "relay-ts", minVersion: "latest" }]).ok).toBe(false)
  })
})
