// Issue 32 item 4: shell snippets work pasted on a fresh machine. docs/mcp.md wrote the key to
// ~/.config/privacy-relay/gateway-key, a directory a fresh home does not have ("No such file or directory").
// Every file a snippet writes goes to the working directory, /tmp, /dev or a directory the same snippet makes first
// (mkdir -p); and the key-file steps of the MCP and proxy pages run in an empty home and leave a 0600 key.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")
const DOCS = [
  "README.md",
  "sdks/typescript/README.md",
  "sdks/python/README.md",
  "starter-kit/README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)
]

interface Block { readonly doc: string; readonly lines: ReadonlyArray<string> }

/** The shell blocks of the user docs, each line without its trailing comment; comment lines dropped. */
const shellBlocks = (): Array<Block> =>
  DOCS.flatMap((doc) =>
    [...readFileSync(join(ROOT, doc), "utf8").matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm)].map((m) => ({
      doc,
      lines: m[1]!.split("\n").filter((l) => !l.trim().startsWith("#")).map((l) => l.replace(/\s#\s.*$/, ""))
    }))
  )

/** Files a line writes: `> f`, `>> f`, `tee f`, and the last operand of `cp` (a directory when it ends with `/`). */
const writeTargets = (line: string): Array<string> => [
  ...[...line.matchAll(/(?<![0-9&<>=-])>>?\s*([^\s;&|)'"]+)|\btee\s+(?:-a\s+)?([^\s;&|)]+)/g)].map((m) => (m[1] ?? m[2])!),
  ...[...line.matchAll(/\bcp\s+([^;&|]+)/g)].map((m) => m[1]!.trim().split(/\s+/).filter((a) => !a.startsWith("-")).at(-1)!)
]

/** The directory a write target lands in. */
const targetDir = (target: string) => (target.endsWith("/") ? target.replace(/\/+$/, "") : dirname(target))

/** Directories a line makes: the operands of `mkdir -p [-m mode] dir...`. */
const madeDirectories = (line: string): Array<string> =>
  [...line.matchAll(/\bmkdir\s+((?:-\S+\s+(?:\d{3,4}\s+)?)*)([^;&|]+)/g)].flatMap((m) =>
    m[1]!.includes("-p") || m[1]!.includes("-pm") ? m[2]!.trim().split(/\s+/).map((d) => d.replace(/\/+$/, "")) : []
  )

/** The working directory, /tmp, /dev, and directories the package a page is about installs (nginx's /etc/nginx). */
const needsNoMkdir = (dir: string) => dir === "." || dir === "/tmp" || dir === "/dev" || dir.startsWith("/dev/") || dir === "/etc/nginx"

describe("shell snippets in the docs work on a fresh machine", () => {
  it("every file a snippet writes is in a directory that exists or that the snippet makes first", () => {
    const missing: Array<string> = []
    let writes = 0
    for (const block of shellBlocks()) {
      const made = new Set<string>()
      for (const line of block.lines) {
        for (const target of writeTargets(line)) {
          writes++
          const dir = targetDir(target)
          if (needsNoMkdir(dir) || made.has(dir)) continue
          // A relative directory the repository already has (e.g. bench/results) is there for whoever runs it.
          if (!dir.startsWith("~") && !dir.startsWith("/") && !dir.startsWith("$") && existsDir(join(ROOT, dir))) continue
          missing.push(`${block.doc}: ${line.trim()} (writes into ${dir}, which a fresh machine does not have: mkdir -p it first)`)
        }
        for (const dir of madeDirectories(line)) made.add(dir)
      }
    }
    expect(writes).toBeGreaterThan(10)
    expect(missing).toEqual([])
  })

  it("the rule catches the old docs/mcp.md line", () => {
    const old = "printf '%s' 'svc_...' > ~/.config/privacy-relay/gateway-key && chmod 600 ~/.config/privacy-relay/gateway-key"
    expect(writeTargets(old)).toEqual(["~/.config/privacy-relay/gateway-key"])
    expect(madeDirectories("umask 077 && mkdir -p -m 700 ~/.config/privacy-relay")).toEqual(["~/.config/privacy-relay"])
  })

  for (const doc of ["docs/mcp.md", "docs/proxy.md"]) {
    it(`${doc}: the key-file lines, run in an empty home from the repository (README Quickstart key), leave the key 0600 in a 0700 directory`, () => {
      const writesKey = (l: string) => writeTargets(l).includes("~/.config/privacy-relay/gateway-key")
      const block = shellBlocks().find((b) => b.doc === doc && b.lines.some(writesKey))!
      expect(block, `${doc} writes the key file`).toBeDefined()
      const upToKey = block.lines.slice(0, block.lines.findIndex(writesKey) + 1)
      const home = mkdtempSync(join(tmpdir(), "pr-fresh-home-"))
      // The working directory stands for the repository after the README's Quickstart: .secrets/gateway-key exists.
      const repo = mkdtempSync(join(tmpdir(), "pr-repo-"))
      mkdirSync(join(repo, ".secrets"), { mode: 0o700 })
      writeFileSync(join(repo, ".secrets/gateway-key"), `svc_${"a".repeat(52)}`, { mode: 0o600 })
      try {
        execFileSync("bash", ["-euc", upToKey.join("\n")], { cwd: repo, env: { PATH: process.env.PATH, HOME: home }, stdio: "pipe" })
        const key = join(home, ".config/privacy-relay/gateway-key")
        expect(readFileSync(key, "utf8")).toMatch(/^svc_/)
        expect(statSync(key).mode & 0o777).toBe(0o600)
        expect(statSync(dirname(key)).mode & 0o777).toBe(0o700)
      } finally {
        rmSync(home, { recursive: true, force: true })
        rmSync(repo, { recursive: true, force: true })
      }
    })
  }
})

function existsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
