import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"))
const readme = readFileSync(join(ROOT, "README.md"), "utf8")

/** The oldest Node the README says can run `npm install`. */
const OLDEST_INSTALL_NODE = "20.19.0"

type Version = readonly [number, number, number]
const parse = (v: string): Version => {
  const [a = 0, b = 0, c = 0] = v.replace(/^v/, "").split(".").map((p) => (p === "x" || p === "*" ? 0 : Number.parseInt(p, 10)))
  return [a, b, c]
}
const compare = (x: Version, y: Version) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]

/** npm's engines ranges as they occur in this lock file: `||` of space-separated >=, >, <=, <, ^, ~ or bare versions. */
const satisfies = (version: string, range: string): boolean => {
  const v = parse(version)
  return range.split("||").some((set) =>
    set.replace(/(>=|<=|>|<|\^|~)\s+/g, "$1").trim().split(/\s+/).every((comparator) => {
      const [, op = "", raw = ""] = /^(>=|<=|>|<|\^|~)?(.*)$/.exec(comparator)!
      const target = parse(raw)
      const c = compare(v, target)
      switch (op) {
        case ">=": return c >= 0
        case ">": return c > 0
        case "<=": return c <= 0
        case "<": return c < 0
        case "^": return c >= 0 && (target[0] === 0 ? v[0] === 0 && v[1] === target[1] : v[0] === target[0])
        case "~": return c >= 0 && v[0] === target[0] && v[1] === target[1]
        // `*`, `x` or an empty range: any version.
        default: if (raw === "*" || raw === "x" || raw === "") return true
          return raw.split(".").length < 3 || raw.includes("x") ? v[0] === target[0] : c === 0
      }
    })
  )
}

describe("npm install on the system Node: every EBADENGINE warning is the README's to explain", () => {
  it("the range check reads npm's forms", () => {
    expect(satisfies("20.20.2", "^22.12.0 || ^24.0.0 || >=26.0.0")).toBe(false)
    expect(satisfies("24.21.0", "^22.12.0 || ^24.0.0 || >=26.0.0")).toBe(true)
    expect(satisfies("20.18.0", ">= 20.19.0")).toBe(false)
    expect(satisfies("20.0.0", ">=0.6.x")).toBe(true)
    expect(satisfies("20.19.0", "*")).toBe(true)
  })

  it("the project states what installing needs in devEngines, so npm does not check its runtime engines against the system Node", () => {
    expect(pkg.engines.node).toBe(">=24")
    expect(pkg.devDependencies.node).toMatch(/^24\./)
    expect(pkg.devEngines.runtime).toMatchObject({ name: "node", version: ">=20.19", onFail: "warn" })
    expect(satisfies(OLDEST_INSTALL_NODE, pkg.devEngines.runtime.version)).toBe(true)
  })

  it("names every non-optional package whose engines exclude the oldest Node the README allows", () => {
    const warned = Object.entries(lock.packages as Record<string, { engines?: { node?: string }; optional?: boolean }>)
      .filter(([path, p]) => path !== "" && !p.optional && p.engines?.node !== undefined && !satisfies(OLDEST_INSTALL_NODE, p.engines.node))
      .map(([path]) => path.replace(/^.*node_modules\//, ""))
    expect(warned).toContain("vitest") // the README's claim rests on the check finding something
    const explanation = readme.slice(readme.indexOf("EBADENGINE"), readme.indexOf("## Quickstart"))
    for (const name of warned) expect(explanation, `README explains ${name}'s EBADENGINE warning`).toContain(`\`${name}\``)
    expect(readme).toContain("Node.js 20.19 or newer")
  })
})
