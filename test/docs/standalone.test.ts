import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")

/** What a user reads: README.md, every docs/*.md and the SDK's README (its paths are relative to its package). */
const USER_DOCS: ReadonlyArray<{ readonly name: string; readonly text: string; readonly base: string }> = [
  "README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  "sdks/typescript/README.md"
].map((name) => ({ name, text: readFileSync(join(ROOT, name), "utf8"), base: name.startsWith("sdks/") ? join(ROOT, dirname(name)) : ROOT }))

const linesMatching = (text: string, pattern: RegExp) =>
  text.split("\n").flatMap((line, i) => (pattern.test(line) ? [`${i + 1}: ${line.trim()}`] : []))

describe("user docs stand alone and name only what exists", () => {
  it("no doc refers to the internal design notes (DESIGN.md), which users do not have", () => {
    for (const doc of USER_DOCS) expect(linesMatching(doc.text, /\bDESIGN\b/), doc.name).toEqual([])
  })

  it("nor does the SDK package's code, whose sources ship in its source maps", () => {
    const sources = (dir: string): Array<string> =>
      readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
      )
    const files = sources("sdks/typescript/src")
    expect(files).toContain("sdks/typescript/src/proxy/proxyConfig.ts")
    const mentions = files.flatMap((file) => linesMatching(readFileSync(join(ROOT, file), "utf8"), /\bDESIGN\b/).map((line) => `${file}:${line}`))
    expect(mentions).toEqual([])
  })

  it("no doc offers a client component this repository does not ship (yet)", () => {
    // Each component may be named once its code is in the tree.
    const components = [
      { name: "MCP server", pattern: /\bMCP\b/, path: "programs/mcp.ts" },
      { name: "starter app", pattern: /starter[ -](app|kit)/i, path: "starter-kit" },
      { name: "CLI demo", pattern: /npm run demo|programs\/demo\.ts/, path: "programs/demo.ts" },
      { name: "SDKs", pattern: /\bsdks\//, path: "sdks" }
    ]
    for (const component of components.filter((c) => !existsSync(join(ROOT, c.path)))) {
      for (const doc of USER_DOCS) expect(linesMatching(doc.text, component.pattern), `${doc.name} names the ${component.name}`).toEqual([])
    }
  })

  it("no table is cut in two by a blank line (the rows after it would render as plain text)", () => {
    for (const doc of USER_DOCS) {
      const lines = doc.text.split("\n")
      const cut = lines.flatMap((line, i) =>
        line === "" && lines[i - 1]?.startsWith("|") && lines[i + 1]?.startsWith("|") && !/^\|[\s|:-]+\|$/.test(lines[i + 2] ?? "")
          ? [`${i + 1}: blank line before ${lines[i + 1]!.slice(0, 40)}`]
          : []
      )
      expect(cut, doc.name).toEqual([])
    }
  })

  it("every repository path a doc names exists", () => {
    const missing: Array<string> = []
    for (const doc of USER_DOCS) {
      for (const match of doc.text.matchAll(/`((?:src|layers|programs|services|migrations|bench|docs|test)\/[A-Za-z0-9_./-]*)`/g)) {
        const path = match[1]!.replace(/\/$/, "")
        if (!path.includes("*") && !existsSync(join(doc.base, path))) missing.push(`${doc.name}: ${match[1]}`)
      }
    }
    expect(missing).toEqual([])
  })

  it("the README's layout table names every top-level folder, and every path in it exists", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const table = readme.slice(readme.indexOf("## Layout")).split("\n").slice(1).filter((line) => line.startsWith("| `"))
    const named = table.flatMap((row) => [...row.split(" | ")[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
    const pathsInRows = table.flatMap((row) => [...row.matchAll(/`([a-z][A-Za-z0-9_.-]*\/[A-Za-z0-9_./-]*)`/g)].map((match) => match[1]!))
    expect(named).toContain("sdks/typescript/")
    expect(pathsInRows).toContain("sdks/typescript/src/proxy")
    // The layers row names its subfolders relative to layers/ (`pg/`, `http/`).
    const exists = (path: string) => existsSync(join(ROOT, path)) || existsSync(join(ROOT, "layers", path))
    // portal/dist is what `npm run portal:build` makes, not a tracked folder.
    expect(pathsInRows.filter((path) => path !== "portal/dist" && !exists(path))).toEqual([])
    const topLevelFolders = [
      ...new Set(execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter((file) => file.includes("/")).map((file) => `${file.split("/")[0]}/`))
    ].filter((folder) => !folder.startsWith("."))
    expect(topLevelFolders).toContain("programs/")
    expect(topLevelFolders.filter((folder) => !named.some((name) => name === folder || name.startsWith(folder)))).toEqual([])
  })

  it("no code comment, script or SDK file refers to a design file users do not have (DESIGN.md, gateway-spec.md, ../shared)", () => {
    const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter((file) =>
      /\.(ts|tsx|js|mjs|py|rs|go|java|php|rb|sh|md|toml|json|yml|yaml)$|(^|\/)run$/.test(file) && file !== "test/docs/standalone.test.ts"
    )
    expect(tracked).toContain("src/webhooks/ssrf.ts")
    const mentions = tracked.filter((file) => existsSync(join(ROOT, file))).flatMap((file) =>
      linesMatching(readFileSync(join(ROOT, file), "utf8"), /DESIGN\.md|gateway-spec|\.\.\/shared\b/).map((line) => `${file}:${line}`)
    )
    expect(mentions).toEqual([])
  })
})
