import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

/**
 * The local proxy is a program over the SDK: tokenising and attesting (prepareCall), the gateway request
 * (relayRequestInit) and restoring the answer, streams included (restoredText and restoredStream, what the SDK's
 * restoredAnswer runs), are the SDK's code, the same as `client.fetch` runs. The proxy keeps only what a local HTTP server needs (callers, limits, logs, worker threads).
 */
const PROXY = join(import.meta.dirname, "../../../../sdks/typescript/src/proxy")
const sources = readdirSync(PROXY).filter((f) => f.endsWith(".ts")).map((f) => [f, readFileSync(join(PROXY, f), "utf8")] as const)

describe("local proxy over the SDK", () => {
  it("the request path calls the SDK's prepareCall, relayRequestInit, restoredText and restoredStream", () => {
    const server = readFileSync(join(PROXY, "proxyServer.ts"), "utf8")
    for (const name of ["prepareCall(", "relayRequestInit(", "restoredText(", "restoredStream("]) expect(server, name).toContain(name)
  })

  it("no proxy file attests, detokenises or parses SSE itself", () => {
    const own = sources.filter(([, text]) => /\b(buildAttestation|encodeAttestationHeader|createSseDetokeniser|detokeniseResponseText|createStreamingDetokeniser)\b/.test(text))
    expect(own.map(([file]) => file)).toEqual([])
  })
})
