import { execFileSync } from "node:child_process"
import { startFakeProvider } from "../../programs/fake-provider.ts"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")

/** The ```sh blocks of the README's Quickstart section (up to the next `## ` heading): what a newcomer copies. */
const quickstartCommands = (): string => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const start = readme.indexOf("## Quickstart")
  if (start === -1) throw new Error("README.md has no ## Quickstart section")
  const end = readme.indexOf("\n## ", start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
  if (blocks.length === 0) throw new Error("README.md has no ```sh block under ## Quickstart")
  return blocks.join("\n")
}

/** True when git ignores `path` (relative to the repository root) in this checkout. */
const gitIgnores = (path: string): boolean => {
  try {
    execFileSync("git", ["check-ignore", "--quiet", "--no-index", path], { cwd: ROOT, stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

describe("README Quickstart keeps the gateway key out of git", () => {
  const commands = quickstartCommands()
  // Step 1 writes the key: the redirect target of the line that extracts api_key.
  const keyPath = /api_key\)'\s*>\s*(\S+)/.exec(commands)?.[1]

  it("writes the key to a git-ignored path (git check-ignore), in a directory it creates with mode 700", () => {
    expect(keyPath, "the Quickstart must write the key with `... .api_key)' > <path>`").toBeDefined()
    expect(gitIgnores(keyPath!), `${keyPath} must be git-ignored`).toBe(true)
    if (!keyPath!.startsWith("/") && !keyPath!.startsWith("~") && dirname(keyPath!) !== ".") {
      expect(commands).toContain(`mkdir -p -m 700 ${dirname(keyPath!)}`)
    }
  })

  it("every later step reads the key from that same path", () => {
    const uses = [...commands.matchAll(/(?:GATEWAY_KEY_FILE=|\$\(cat |\$\(cut -c1-10 )(\S+?)[)\s]/g)].map((m) => m[1])
    expect(uses.length).toBeGreaterThanOrEqual(3)
    for (const use of uses) expect(use).toBe(keyPath)
  })

  it("git-ignores the key file names the docs use anywhere in the tree", () => {
    for (const path of ["gateway-key", ".secrets/gateway-key", "docs/gateway-key", "attester-key.json", "alias-secret"]) {
      expect(gitIgnores(path), path).toBe(true)
    }
    expect(gitIgnores("README.md")).toBe(false)
  })
})

describe("README Quickstart shows what the provider received", () => {
  const commands = quickstartCommands()

  it("its last step's command prints each request the fake provider recorded (GET /_fake/received)", async () => {
    const step = /curl -s (http:\/\/127\.0\.0\.1:8788\/_fake\/received) \\\n\s*\| node_modules\/\.bin\/node -e '([^']+)'/.exec(commands)
    expect(step, "the Quickstart pipes GET /_fake/received into a node one-liner").not.toBeNull()
    const provider = await startFakeProvider({ port: 0 })
    try {
      const body = JSON.stringify({ messages: [{ content: "Email <EMAIL_1_kgzt> about the invoice", role: "user" }], model: "local-chat" })
      await (await fetch(`${provider.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body })).text()
      const received = await (await fetch(step![1]!.replace("http://127.0.0.1:8788", provider.url))).text()
      const printed = execFileSync(process.execPath, ["-e", step![2]!], { input: received, encoding: "utf8" })
      expect(printed).toBe(`POST /v1/chat/completions ${body}\n`)
      expect(commands).toContain(`# -> POST /v1/chat/completions ${body}`)
    } finally {
      await provider.close()
    }
  })

  it("docs/providers.md documents every control route of the fake provider", () => {
    const source = readFileSync(join(ROOT, "programs/fake-provider.ts"), "utf8")
    const routes = [...source.matchAll(/req\.method === "(GET|POST)" && path === "(\/_fake\/[a-z]+)"/g)].map((m) => `${m[1]} ${m[2]}`)
    expect(routes.length).toBeGreaterThanOrEqual(4)
    const doc = readFileSync(join(ROOT, "docs/providers.md"), "utf8")
    for (const route of routes) expect(doc).toContain(`| \`${route}\` |`)
  })
})
