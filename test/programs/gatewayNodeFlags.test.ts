import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { GATEWAY_NODE_FLAGS } from "../../programs/gatewayNodeFlags.ts"

const root = fileURLToPath(new URL("../../", import.meta.url))
const read = (path: string) => readFileSync(root + path, "utf8")

/** Every place that starts the gateway, with the text of its start command. */
const launchers: Record<string, () => string> = {
  "deploy/Dockerfile": () => read("deploy/Dockerfile").split("\n").find((l) => l.startsWith("CMD "))!,
  "deploy/systemd": () => read("deploy/systemd/privacy-relay-gateway@.service").split("\n").find((l) => l.startsWith("ExecStart="))!,
  "deploy/kubernetes": () => read("deploy/kubernetes/gateway.yaml").split("\n").find((l) => l.includes("programs/gateway.ts"))!,
  "npm run gateway": () => JSON.parse(read("package.json")).scripts.gateway,
  "npm start": () => JSON.parse(read("package.json")).scripts.start,
  "bench/lib/benchGateway.ts": () => read("bench/lib/benchGateway.ts").split("\n").find((l) => l.includes("...GATEWAY_NODE_FLAGS"))!
}

describe("the gateway's Node flags", () => {
  it("is a non-empty list of V8 heap flags", () => {
    expect(GATEWAY_NODE_FLAGS.length).toBeGreaterThan(0)
    for (const flag of GATEWAY_NODE_FLAGS) expect(flag).toMatch(/^--[a-z-]+=\d+$/)
  })

  for (const [where, command] of Object.entries(launchers)) {
    it(`are on the start command in ${where}`, () => {
      const line = command()
      expect(line).toBeDefined()
      if (where === "bench/lib/benchGateway.ts") return // every bench starts its gateway there, with the list itself
      for (const flag of GATEWAY_NODE_FLAGS) expect(line).toContain(flag)
    })
  }
})
