// docs/configuration.md against the settings schemas (src/config/gatewaySettings.ts): every variable the gateway and
// the fake provider read is documented in their sections, and every variable the gateway's tables list is one the
// schema reads (a documented setting nothing reads, or a setting nobody documented, fails here).
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { FAKE_PROVIDER_SETTINGS, GATEWAY_SETTINGS } from "../../src/config/gatewaySettings.ts"
import { variableNames } from "../../sdks/typescript/src/wire/config/setting.ts"

const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8")

/** The text from the heading `## <title>` to the next `## ` heading. */
const section = (title: string): string => {
  const start = doc.indexOf(`\n## ${title}`)
  expect(start, `docs/configuration.md has a "## ${title}" section`).toBeGreaterThan(0)
  const end = doc.indexOf("\n## ", start + 1)
  return doc.slice(start, end === -1 ? undefined : end)
}

const VARIABLE = /`([A-Z][A-Z0-9]*(?:_[A-Z0-9<>]+)*)`/g
const mentioned = (text: string) => new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))
/** The variables in the first column of the section's tables. */
const tabled = (text: string) =>
  new Set(
    text.split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...line.split("|")[1]!.matchAll(VARIABLE)].map((m) => m[1]!))
  )

describe("docs/configuration.md documents the settings schema", () => {
  const gateway = section("Gateway")
  const gatewayNames = variableNames(GATEWAY_SETTINGS)

  it("every gateway setting is in the Gateway section", () => {
    const documented = mentioned(gateway)
    expect(gatewayNames.filter((name) => !documented.has(name))).toEqual([])
  })

  it("every variable the Gateway section's tables list is one the schema reads", () => {
    expect([...tabled(gateway)].filter((name) => !gatewayNames.includes(name))).toEqual([])
  })

  it("every fake provider setting is in the Fake provider section", () => {
    const documented = mentioned(section("Fake provider"))
    expect(variableNames(FAKE_PROVIDER_SETTINGS).filter((name) => !documented.has(name))).toEqual([])
  })

  it("the check notices a missing setting", () => {
    const documented = mentioned(gateway.replaceAll("`WEBHOOK_POLL_MS`", "WEBHOOK_POLL_MS"))
    expect(gatewayNames.filter((name) => !documented.has(name))).toEqual(["WEBHOOK_POLL_MS"])
  })
})
