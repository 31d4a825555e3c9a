import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const preload = join(import.meta.dirname, "../../../bench/lib/listenOnLoopback.ts")

/** Starts a server the way `listen` is called in `program`, under the preload, and returns the address it bound. */
const boundAddress = (program: string): string =>
  execFileSync(process.execPath, ["--import", preload, "-e", `
    const server = require("node:http").createServer()
    ${program}
    server.on("listening", () => { console.log(server.address().address); server.close() })
  `], { encoding: "utf8", timeout: 15_000 }).trim()

describe("bench listenOnLoopback preload (peer gateways started by bench:peers)", () => {
  it("a server asking for every interface (listen(port)) listens on 127.0.0.1", () => {
    expect(boundAddress("server.listen(0)")).toBe("127.0.0.1")
  })
  it("an explicit host (listen(port, '0.0.0.0')) is replaced by 127.0.0.1", () => {
    expect(boundAddress("server.listen(0, '0.0.0.0')")).toBe("127.0.0.1")
  })
  it("an options object without a host gets 127.0.0.1", () => {
    expect(boundAddress("server.listen({ port: 0 })")).toBe("127.0.0.1")
  })
})
