// Issue 32 item 8: `npm run portal:build` printed five warnings: the SDK's Node-only engine identity module
// (node:fs, node:path, node:url, node:crypto, and a `new URL(..., import.meta.url)`) was pulled into the browser
// bundle. The portal's build now fixes the engine identity at build time like every other browser build of the SDK.
// The build must print no warning at all, import no Node module, and docs/portal.md's size figures must stay true.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { build, createLogger, type Rollup } from "vite"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")

describe("npm run portal:build", () => {
  it("prints no warning, bundles no Node module, and is the size docs/portal.md says (within 5%)", async () => {
    const warnings: Array<string> = []
    const logger = createLogger("info")
    logger.warn = (message) => void warnings.push(message)
    logger.warnOnce = (message) => void warnings.push(message)
    // As `npm run portal:build` runs it: vitest sets NODE_ENV=test, which would give a development build of the libraries.
    const nodeEnv = process.env.NODE_ENV
    process.env.NODE_ENV = "production"
    // Rollup/rolldown plugin warnings (e.g. "Module node:fs has been externalized") arrive through onwarn.
    const output = (await build({
      configFile: join(ROOT, "portal", "vite.config.ts"),
      mode: "production",
      customLogger: logger,
      logLevel: "info",
      build: { write: false, rolldownOptions: { onwarn: (warning) => void warnings.push(warning.message) } }
    }).finally(() => (process.env.NODE_ENV = nodeEnv))) as Rollup.RollupOutput | Array<Rollup.RollupOutput>
    expect(warnings).toEqual([])
    const chunks = (Array.isArray(output) ? output.flatMap((o) => o.output) : output.output).filter((o): o is Rollup.OutputChunk => o.type === "chunk")
    const js = chunks.map((c) => c.code).join("")
    expect(js).not.toMatch(/["']node:(fs|path|url|crypto)["']/)
    expect(chunks.flatMap((c) => Object.keys(c.modules)).filter((id) => id.endsWith("/client/engine.ts"))).toEqual([])

    const doc = readFileSync(join(ROOT, "docs/portal.md"), "utf8")
    const [, kb, gzKb] = /(\d+) KB of JavaScript, (\d+) KB gzipped/.exec(doc) ?? []
    expect(kb, "docs/portal.md states the bundle size").toBeDefined()
    const bytes = Buffer.byteLength(js)
    const gzBytes = gzipSync(js).byteLength
    expect(Math.abs(bytes / 1000 - Number(kb)) / Number(kb), `bundle is ${bytes} bytes; docs/portal.md says ${kb} KB`).toBeLessThan(0.05)
    expect(Math.abs(gzBytes / 1000 - Number(gzKb)) / Number(gzKb), `gzipped ${gzBytes} bytes; docs/portal.md says ${gzKb} KB`).toBeLessThan(0.05)
  }, 120_000)
})
