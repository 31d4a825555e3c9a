// The gateway's container image ships no client code. No docker here: the build context is computed from
// .dockerignore (Docker's rules: a pattern matches a path or any folder above it, `!` lets back in, the last
// matching pattern decides) over the repository's files, copied to a temporary folder, installed with the
// Dockerfile's own `npm install` command, and the gateway is started from that folder.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REPO_ROOT, reachableFiles } from "../support/importGraph.ts"

/** Docker's .dockerignore matching: `*` and `?` within one path segment, `**` across segments. */
const dockerignoreRules = (text: string) =>
  text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const include = line.startsWith("!")
    const pattern = (include ? line.slice(1) : line).replace(/^\/+|\/+$/g, "")
    const source = pattern.split(/(\*\*|\*|\?)/).map((part) => (part === "**" ? ".*" : part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")
    return { include, regex: new RegExp(`^${source}$`) }
  })

const inContext = (rules: ReturnType<typeof dockerignoreRules>, file: string): boolean => {
  const parts = file.split("/")
  const paths = parts.map((_, i) => parts.slice(0, i + 1).join("/"))
  let included = true
  for (const rule of rules) if (paths.some((path) => rule.regex.test(path))) included = rule.include
  return included
}

/** What a clean checkout holds (what CI and a release build see): the repository's tracked files. */
const trackedFiles = () => execFileSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" }).split("\n").filter((f) => f !== "" && existsSync(join(REPO_ROOT, f)))

/** The Dockerfile's `npm install ...` (the RUN step that installs the dependencies), as words. */
const dockerfileInstall = (): Array<string> => {
  const run = readFileSync(join(REPO_ROOT, "deploy/Dockerfile"), "utf8").split("\n").find((line) => /^RUN npm install\b/.test(line))
  if (run === undefined) throw new Error("deploy/Dockerfile has no RUN npm install step")
  return run.slice("RUN ".length).split("&&")[0]!.trim().split(/\s+/)
}

/** Every package directory under a node_modules tree, at any depth. */
const installedPackages = (nodeModules: string): Array<string> =>
  readdirSync(nodeModules, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory() || entry.name.startsWith(".")) return []
    const names = entry.name.startsWith("@") ? readdirSync(join(nodeModules, entry.name)).map((scoped) => `${entry.name}/${scoped}`) : [entry.name]
    return names.flatMap((name) => {
      const nested = join(nodeModules, name, "node_modules")
      return [name, ...(existsSync(nested) ? installedPackages(nested) : [])]
    })
  })

/** Client packages: the engine's libraries, on-device OCR and its data, the MCP SDK, the SDK itself. */
const CLIENT_PACKAGES = ["@privacy-relay/sdk", "@modelcontextprotocol/sdk", "tesseract.js", "tesseract.js-core", "@tesseract.js-data/eng", "compromise", "gpt-tokenizer", "libphonenumber-js", "ibantools", "docx", "exceljs", "unpdf"]

const rules = dockerignoreRules(readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8"))
const context = trackedFiles().filter((file) => inContext(rules, file))
let image: string

beforeAll(() => {
  image = mkdtempSync(join(tmpdir(), "pr-image-"))
  for (const file of context) {
    mkdirSync(dirname(join(image, file)), { recursive: true })
    copyFileSync(join(REPO_ROOT, file), join(image, file))
  }
  const [command, ...args] = dockerfileInstall()
  execFileSync(command!, args, { cwd: image, stdio: ["ignore", "ignore", "inherit"] })
}, 300_000)

afterAll(() => rmSync(image, { recursive: true, force: true }))

describe("the gateway's image context (.dockerignore, deploy/Dockerfile)", () => {
  it("the rules are Docker's: everything is left out, then only what is let back in comes back", () => {
    const sample = dockerignoreRules("*\n!src\n!sdks/typescript/src/wire\n*.md")
    expect(inContext(sample, "src/a/b.ts")).toBe(true)
    expect(inContext(sample, "sdks/typescript/src/wire/x.ts")).toBe(true)
    expect(inContext(sample, "sdks/typescript/src/tokeniser/x.ts")).toBe(false)
    expect(inContext(sample, "README.md")).toBe(false)
    expect(inContext(sample, "package.json")).toBe(false)
  })

  it("holds no client code, no OCR data and no test: of the SDK only the wire format and the egress policy", () => {
    expect(context.length).toBeGreaterThan(100)
    const sdk = context.filter((file) => file.startsWith("sdks/"))
    expect(sdk.filter((file) => !file.startsWith("sdks/typescript/src/wire/") && file !== "sdks/vectors/egress-policy.json")).toEqual([])
    expect(context.filter((file) => /^(test|bench|starter-kit|portal\/src|sdks\/typescript\/src\/(tokeniser|ocr|mcp|proxy|client|files))\//.test(file))).toEqual([])
    expect(context.filter((file) => /traineddata|tesseract/i.test(file))).toEqual([])
    expect(context).not.toContain("programs/proxy.ts")
    expect(context).not.toContain("programs/mcp.ts")
  })

  it("holds every file the gateway, `npm start` and the fake provider import (the image still runs them)", () => {
    for (const program of ["programs/gateway.ts", "programs/start.ts", "programs/fake-provider.ts", "programs/cli.ts"]) {
      const missing = [...reachableFiles(program)].filter((file) => !context.includes(file))
      expect(missing, program).toEqual([])
    }
  })

  it("the Dockerfile's install puts no client package anywhere in node_modules, and the gateway's own are there", () => {
    expect(dockerfileInstall()).toContain("--omit=dev")
    const installed = installedPackages(join(image, "node_modules"))
    expect(installed).toEqual(expect.arrayContaining(["effect", "@effect/platform-node", "@electric-sql/pglite", "oidc-provider", "swagger-ui-dist"]))
    expect(installed.filter((name) => CLIENT_PACKAGES.includes(name))).toEqual([])
  })

  it("`npm start` from the image's files starts the gateway and the fake provider: /healthz answers, a model is listed", async () => {
    const node = join(REPO_ROOT, "node_modules", ".bin", "node")
    const child: ChildProcess = spawn(node, ["programs/start.ts"], {
      cwd: image,
      env: { PATH: process.env.PATH, HOME: image, PORT: "0", HOST: "127.0.0.1", FAKE_PROVIDER_PORT: "0", DATA_DIR: join(image, ".data") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      let output = ""
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk
          const m = /"message":"gateway listening".*?"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)
          if (m !== null) resolve(m[1]!)
        }
        child.stdout!.on("data", onData)
        child.stderr!.on("data", onData)
        child.once("exit", (code) => reject(new Error(`npm start exited ${code}: ${output}`)))
      })
      expect((await (await fetch(`${url}/healthz`)).json()) as unknown).toEqual({ status: "ok" })
      const models = (await (await fetch(`${url}/api/v1/models`)).json()) as { data: Array<{ id: string }> }
      expect(models.data.map((m) => m.id)).toContain("local-chat")
    } finally {
      await new Promise<void>((done) => {
        if (child.exitCode !== null) return done()
        child.once("exit", () => done())
        child.kill("SIGTERM")
      })
    }
  }, 120_000)
})
