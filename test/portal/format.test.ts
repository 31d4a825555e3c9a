// Issue 32 items 11 and 12: the portal lists a call's model with its provider (a routed local-economy/local-chat call
// showed as local-chat, like local/local-chat at another price), and headline cards round to the cent ($1.999925 was
// shown as such). Formatting here; the pages in Chromium in test/portal/portal.test.ts.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { centsFromMicros, microsToUsd, modelLabel, usd, usdCents } from "../../portal/src/format.ts"

const PORTAL = join(import.meta.dirname, "../../portal/src")

describe("portal formatting", () => {
  it("headline amounts round to the cent, half away from zero; exact amounts keep the gateway's six decimals", () => {
    expect(usdCents("1.999925")).toBe("$2.00")
    expect(usdCents("1.994999")).toBe("$1.99")
    expect(usdCents("1.995000")).toBe("$2.00")
    expect(usdCents("0.004")).toBe("<$0.01")
    expect(usdCents("0.000000")).toBe("$0.00")
    expect(usdCents("-0.015")).toBe("−$0.02")
    expect(usdCents("-0.001")).toBe(">−$0.01")
    expect(usdCents("12345.5")).toBe("$12345.50")
    expect(usdCents(undefined)).toBe("—")
    expect(centsFromMicros(1_999_925)).toBe("$2.00")
    expect(centsFromMicros(41)).toBe("<$0.01") // a month of a few cheap calls is not "$0.00"
    expect(usd("1.999925")).toBe("$1.999925")
    expect(microsToUsd(1_999_925)).toBe("$1.999925")
  })

  it("a model is shown with its provider", () => {
    expect(modelLabel("local-economy", "local-chat")).toBe("local-economy/local-chat")
    expect(modelLabel("local", "local-chat")).toBe("local/local-chat")
    expect(modelLabel(null, "local-chat")).toBe("local-chat")
  })

  it("no page or component renders a call's bare model: every one goes through modelLabel", () => {
    const files = [...readdirSync(join(PORTAL, "pages")).map((f) => `pages/${f}`), ...readdirSync(join(PORTAL, "components")).map((f) => `components/${f}`)]
    const bare: Array<string> = []
    for (const file of files) {
      const text = readFileSync(join(PORTAL, file), "utf8")
      text.split("\n").forEach((line, i) => {
        // A JSX expression that renders `<something>.model` (a usage record's, a receipt's claims', a summary day's).
        if (/\{[\w.!?]*\.(claims\.)?model\}/.test(line)) bare.push(`${file}:${i + 1}: ${line.trim()}`)
      })
    }
    expect(bare).toEqual([])
  })
})
