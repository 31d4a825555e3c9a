import { describe, expect, it } from "vitest"
import { modelList } from "../../../src/providers/modelList.ts"

describe("modelList", () => {
  it("lists every route a model is served on, the translated conversation route included", () => {
    const { data } = modelList(() => true, true)
    const byId = new Map(data.map((m) => [m.id, m]))
    expect(byId.get("gpt-4o-mini")?.capabilities).toEqual(["chat", "messages", "responses"])
    expect(byId.get("claude-haiku-4-5-20251001")?.capabilities).toEqual(["chat", "messages", "responses"])
    expect(byId.get("local-chat")?.capabilities).toEqual(["chat", "messages", "responses"])
    expect(byId.get("text-embedding-3-small")?.capabilities).toEqual(["embeddings"])
  })
})
