import { existsSync, readFileSync } from "node:fs"
import { dirname, relative, resolve, sep } from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The SDK's verification code must run on Node >= 20, Deno and in browsers: nothing reachable from
 * sdks/typescript/src/verify/index.ts may import a `node:` module or gateway-only code (layers, services, programs),
 * and its only package dependency is `canonicalize` (JCS).
 */
const ROOT = resolve(import.meta.dirname, "../../../..")
const PATTERNS = [/\b(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g]

const graph = (entry: string) => {
  const files = new Set<string>()
  const bare = new Set<string>()
  const pending = [resolve(ROOT, entry)]
  while (pending.length > 0) {
    const file = pending.pop()!
    const key = relative(ROOT, file).split(sep).join("/")
    if (files.has(key) || !existsSync(file)) continue
    files.add(key)
    for (const pattern of PATTERNS) {
      for (const [, specifier] of readFileSync(file, "utf8").matchAll(pattern)) {
        if (specifier!.startsWith(".")) pending.push(resolve(dirname(file), specifier!))
        else bare.add(specifier!)
      }
    }
  }
  return { files, bare }
}

describe("SDK verification is portable", () => {
  it("reaches only portable wire-format code and no node: module", () => {
    const { files, bare } = graph("sdks/typescript/src/verify/index.ts")
    expect(files.has("sdks/typescript/src/wire/receipts/verify.ts")).toBe(true)
    expect(files.has("sdks/typescript/src/wire/webhooks/receiver.ts")).toBe(true)
    // Nothing outside the SDK's own sources: no gateway code (src, layers, services, programs).
    expect([...files].filter((f) => !f.startsWith("sdks/typescript/src/"))).toEqual([])
    expect([...bare].filter((s) => s.startsWith("node:"))).toEqual([])
    // No package at all: JCS is the SDK's own (wire/crypto/jcs.ts), so a verifier runs on any runtime as it is.
    expect([...bare].sort()).toEqual([])
  })
})
