// Issue 32 item 7: key_scopes names the scope vocabulary (messages, completions, buffer), the routes each allows, and
// which of them this key holds; a key with scopes set holds only those. (The whole tool over stdio against a real
// gateway: test/programs/mcp.test.ts.)
import { describe, expect, it } from "vitest"
import type { SessionContext } from "../../../../sdks/typescript/src/mcp/context.ts"
import { gatewayTools } from "../../../../sdks/typescript/src/mcp/tools/gateway.ts"
import { scopeVocabulary } from "../../../../layers/http/PublicRoutes.ts"

const keyScopes = gatewayTools.find((t) => t.name === "key_scopes")!

const sessionWithKey = (permissions: Array<string>) =>
  ({
    shared: {
      client: async () => ({
        rest: {
          self: { key: async () => ({ key_prefix: "svc_abcdef", org_id: "org_1", permissions, models: ["local-chat"], tier: "free" }) },
          keys: { vocabulary: async () => scopeVocabulary() }
        }
      })
    }
  }) as unknown as SessionContext

describe("MCP key_scopes", () => {
  it("marks only the key's own scopes as granted, with the routes of every scope", async () => {
    const result = await keyScopes.run({}, sessionWithKey(["messages"]))
    const structured = result.structuredContent as { scopes: Array<{ name: string; routes: Array<string>; granted: boolean }> }
    expect(structured.scopes.map((s) => [s.name, s.granted])).toEqual([["messages", true], ["completions", false], ["buffer", false]])
    expect(structured.scopes[0]!.routes).toContain("POST /api/v1/messages")
    const text = (result.content[0] as { text: string }).text
    expect(text).toContain("[x] messages: POST /api/v1/messages")
    expect(text).toMatch(/\[ \] completions: POST \/api\/v1\/chat\/completions/)
    expect(text).toContain("[ ] buffer: no route requires it")
  })

  it("a key without scopes holds every scope", async () => {
    const result = await keyScopes.run({}, sessionWithKey([]))
    const structured = result.structuredContent as { scopes: Array<{ granted: boolean }> }
    expect(structured.scopes.every((s) => s.granted)).toBe(true)
  })

  it("the vocabulary's routes come from the route registry: every relay route is under its scope", () => {
    const routes = Object.fromEntries(scopeVocabulary().scopes.map((s) => [s.name, s.routes]))
    expect(routes.completions).toEqual(expect.arrayContaining(["POST /api/v1/chat/completions", "POST /api/v1/embeddings"]))
    expect(routes.messages).toEqual(expect.arrayContaining(["POST /api/v1/messages"]))
  })
})
