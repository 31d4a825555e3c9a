import { describe, expect, it } from "vitest"
import { importSpecifiers, reachableFiles } from "../support/importGraph.ts"

/**
 * Content-blindness is architectural: nothing the gateway runs may import the client engine (the SDK's
 * `sdks/typescript/src/tokeniser` and `sdks/typescript/src/client`) or the local proxy
 * (`sdks/typescript/src/proxy`) and the MCP server (`sdks/typescript/src/mcp`). Of the SDK, the gateway imports the wire-format code only (`sdks/typescript/src/wire`, its one copy). This walks every file
 * reachable from a program through relative imports (static `import`/`export ... from`, side-effect
 * `import "..."`, dynamic `import("...")`) and checks where they lead. The first line is the compiler's: the gateway
 * is its own TypeScript project (tsconfig.gateway.json) that references only the wire's project, so an import of any
 * other client file from gateway code fails `tsc -b tsconfig.gateway.json` (TS6307); this walk is the second.
 */
const WIRE = "sdks/typescript/src/wire/"
/**
 * The egress policy is wire data, not engine: the gateway walks relayed bodies with it (structure only) as every client
 * does (docs/egress-policy.md). It holds field names and classes, no detector and no user text.
 */
const WIRE_DATA = new Set(["sdks/vectors/egress-policy.json"])
/** Client-side code: everything of the SDK but its wire-format code (the engine, the local proxy, the MCP server). */
const isClientSide = (file: string) =>
  (file.startsWith("sdks/") && !file.startsWith(WIRE) && !WIRE_DATA.has(file))
const forbiddenIn = (files: Set<string>) => [...files].filter(isClientSide)

describe("content-blind gateway (architecture)", () => {
  it("no file reachable from programs/gateway.ts is client-side code (engine, SDK outside wire/, proxy)", () => {
    const reachable = reachableFiles("programs/gateway.ts")
    // The walk really follows the gateway's imports (a broken walker would pass vacuously).
    expect(reachable.has("layers/GatewayLive.ts")).toBe(true)
    expect(reachable.has("layers/http/RelayRoutes.ts")).toBe(true)
    expect(reachable.has("sdks/typescript/src/wire/attestation/v3.ts")).toBe(true)
    expect(reachable.has("sdks/typescript/src/wire/receipts/verify.ts")).toBe(true)
    expect(reachable.has("sdks/vectors/egress-policy.json")).toBe(true)
    expect(forbiddenIn(reachable)).toEqual([])
  })

  it("nor from what `npm start` runs (programs/start.ts: the gateway and the fake provider) or the operator CLI", () => {
    for (const program of ["programs/start.ts", "programs/fake-provider.ts", "programs/cli.ts"]) {
      const reachable = reachableFiles(program)
      expect(reachable.has("layers/GatewayLive.ts") || program !== "programs/start.ts").toBe(true)
      expect(forbiddenIn(reachable), program).toEqual([])
    }
  })

  it("the same walk does find the tokeniser from the local proxy (the check can fail)", () => {
    const reachable = reachableFiles("programs/proxy.ts")
    expect(reachable.has("sdks/typescript/src/tokeniser/index.ts")).toBe(true)
    expect(reachable.has("sdks/typescript/src/client/deviceKey.ts")).toBe(true)
    expect(reachable.has("sdks/typescript/src/proxy/proxyServer.ts")).toBe(true)
    expect(forbiddenIn(reachable).length).toBeGreaterThan(5)
  })

  it("recognises every import form", () => {
    const source = [
      'import { a } from "./a.ts"',
      'import type {\n  B,\n  C\n} from "./b.ts"',
      'export { d } from "../d.ts"',
      'export * from "./e.ts"',
      'import "./f.ts"',
      'const g = await import("./g.ts")'
    ].join("\n")
    expect(importSpecifiers(source).sort()).toEqual(["../d.ts", "./a.ts", "./b.ts", "./e.ts", "./f.ts", "./g.ts"])
  })
})
