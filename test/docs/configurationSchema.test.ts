// docs/configuration.md against the settings schemas (src/config/gatewaySettings.ts for the gateway and the fake
// provider; the client programs' schemas in sdks/typescript/src: proxy/proxyConfig.ts, mcp/settings.ts, demo.ts):
// every variable a program reads is documented in its section, and every variable a section lists is one the schema
// reads (a documented setting nothing reads, or a setting nobody documented, fails here). docs/proxy.md's settings
// table, the variables docs/mcp.md names and starter-kit/README.md's settings table (STARTER_SETTINGS,
// starter-kit/settings.ts) are held to the same schemas.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { FAKE_PROVIDER_SETTINGS, GATEWAY_SETTINGS } from "../../src/config/gatewaySettings.ts"
import { DEMO_SETTINGS } from "../../sdks/typescript/src/demo.ts"
import { MCP_SETTINGS } from "../../sdks/typescript/src/mcp/settings.ts"
import { PROXY_ENVIRONMENT_SETTINGS, PROXY_SETTINGS } from "../../sdks/typescript/src/proxy/proxyConfig.ts"
import { TRANSPARENCY_SETTINGS } from "../../sdks/typescript/src/transparencyMonitor.ts"
import { variableNames } from "../../sdks/typescript/src/wire/config/setting.ts"
import { STARTER_SETTINGS } from "../../starter-kit/settings.ts"

const read = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), "utf8")
const doc = read("configuration.md")

/** The text from the heading `## <title>` to the next `## ` heading. */
const sectionOf = (text: string, title: string): string => {
  const start = text.indexOf(`\n## ${title}`)
  expect(start, `the doc has a "## ${title}" section`).toBeGreaterThan(0)
  const end = text.indexOf("\n## ", start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}
const section = (title: string) => sectionOf(doc, title)

const VARIABLE = /`([A-Z][A-Z0-9]*(?:_[A-Z0-9<>]+)*)`/g
const mentioned = (text: string) => new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))
/** The variables in the first column of the section's tables. */
const tabled = (text: string) =>
  new Set(
    text.split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...line.split("|")[1]!.matchAll(VARIABLE)].map((m) => m[1]!))
  )
/** Names in `mentionedNames` that are not in `names`. */
const unknown = (mentionedNames: Set<string>, names: ReadonlyArray<string>) => [...mentionedNames].filter((name) => !names.includes(name))

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

describe("the client programs' settings are documented (docs/configuration.md, docs/proxy.md, docs/mcp.md)", () => {
  const proxyNames = [...variableNames(PROXY_SETTINGS), ...variableNames(PROXY_ENVIRONMENT_SETTINGS)]
  const mcpNames = variableNames(MCP_SETTINGS)
  const demoNames = variableNames(DEMO_SETTINGS)

  it("every local proxy setting is in the Local proxy section, which names no other", () => {
    const documented = mentioned(section("Local proxy"))
    expect(proxyNames.filter((name) => !documented.has(name))).toEqual([])
    expect(unknown(documented, proxyNames)).toEqual([])
  })

  it("every MCP server setting is in the MCP server section, which names no other", () => {
    const documented = mentioned(section("MCP server"))
    expect(mcpNames.filter((name) => !documented.has(name))).toEqual([])
    expect(unknown(documented, mcpNames)).toEqual([])
  })

  it("every demo setting is in the Demo section, which names no other", () => {
    const documented = mentioned(section("Demo"))
    expect(demoNames.filter((name) => !documented.has(name))).toEqual([])
    expect(unknown(documented, demoNames)).toEqual([])
  })

  it("every transparency monitor setting is in its section, which names no other", () => {
    const documented = mentioned(section("Transparency monitor"))
    const names = variableNames(TRANSPARENCY_SETTINGS)
    expect(names.filter((name) => !documented.has(name))).toEqual([])
    expect(unknown(documented, names)).toEqual([])
  })

  it("every starter kit setting is in the Starter kit section, which names no other, and starter-kit/README.md's table lists exactly them", () => {
    const names = variableNames(STARTER_SETTINGS)
    const documented = mentioned(section("Starter kit"))
    expect(names.filter((name) => !documented.has(name))).toEqual([])
    expect(unknown(documented, names)).toEqual([])
    const readme = readFileSync(new URL("../../starter-kit/README.md", import.meta.url), "utf8")
    expect([...tabled(readme)].sort()).toEqual([...names].sort())
  })

  it("docs/proxy.md's settings table lists exactly the proxy's settings, each with its PROXY_CONFIG key", () => {
    const table = sectionOf(read("proxy.md"), "Settings").split("\n").filter((line) => line.startsWith("| `"))
    const rows = table.map((line) => line.split("|").map((cell) => cell.trim()))
    const variables = rows.map((cells) => cells[1]!.replaceAll("`", ""))
    const fileKeys = Object.fromEntries(rows.map((cells) => [cells[1]!.replaceAll("`", ""), cells[2]!.replaceAll("`", "")]))
    // Only the environment names the file itself; it is described above the table.
    expect(variables.sort()).toEqual(proxyNames.filter((name) => name !== "PROXY_CONFIG").sort())
    for (const [key, setting] of Object.entries(PROXY_SETTINGS)) {
      expect(fileKeys[setting.name], setting.name).toBe(key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
    }
    for (const setting of Object.values(PROXY_ENVIRONMENT_SETTINGS)) if (setting.name in fileKeys) expect(fileKeys[setting.name], setting.name).toBe("")
  })

  it("every setting docs/mcp.md names is one the MCP server reads", () => {
    expect(unknown(mentioned(read("mcp.md")), mcpNames)).toEqual([])
  })

  it("the check notices a client setting nobody documented", () => {
    const documented = mentioned(section("MCP server").replaceAll("`MCP_OCR_IDLE_SECONDS`", "MCP_OCR_IDLE_SECONDS"))
    expect(mcpNames.filter((name) => !documented.has(name))).toEqual(["MCP_OCR_IDLE_SECONDS"])
  })
})
