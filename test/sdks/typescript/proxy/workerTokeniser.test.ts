import { afterEach, describe, expect, it } from "vitest"
import { type RequestTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { workerTokeniser } from "../../../../sdks/typescript/src/proxy/workerTokeniser.ts"
import { loadBuiltinNameModel } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const chat = (content: string) => ({ model: "local-chat", messages: [{ role: "user", content }] })
const sent = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Prose with a different name in every sentence: slow for the built-in name model. */
const prose = (chars: number): string => {
  const parts: Array<string> = []
  for (let i = 0, length = 0; length < chars; i++) {
    const sentence = `Yesterday Alice Number${i} met Bob Person${i * 7} to talk about report ${i}. `
    parts.push(sentence)
    length += sentence.length
  }
  return parts.join("").slice(0, chars)
}

const open: Array<RequestTokeniser> = []
afterEach(async () => {
  for (const t of open.splice(0)) await t.close()
})
const tokeniser = (...args: Parameters<typeof workerTokeniser>) => {
  const t = workerTokeniser(...args)
  open.push(t)
  return t
}

describe("workerTokeniser: short bodies on the calling thread, long ones in a worker", () => {
  it("a short body is tokenised the same way on the calling thread as in a worker: the value never leaves, the alias map restores it", async () => {
    for (const t of [tokeniser({ kind: "off" }), tokeniser({ kind: "off" }, { inlineMaxChars: 0 })]) {
      // A body of its own for each: the tokeniser is handed the body and may rewrite it in place.
      const out = await t.tokenise("chat.completions", chat("Mail jane.doe@example.com about it."), new AbortController().signal)
      expect(sent(out.bodyBytes)).not.toContain("jane.doe@example.com")
      expect(out.detectorsFired).toEqual({ EMAIL: 1 })
      expect([...out.map.values()]).toEqual(["jane.doe@example.com"])
      const alias = [...out.map.keys()][0]
      expect(JSON.parse(sent(out.bodyBytes))).toEqual(chat(`Mail ${alias} about it.`))
    }
  })

  it("built-in names on a short body: the name is replaced on the calling thread too", async () => {
    const out = await tokeniser({ kind: "builtin" }).tokenise("chat.completions", chat("Say hello to Ada Lovelace."), new AbortController().signal)
    expect(sent(out.bodyBytes)).not.toContain("Lovelace")
    expect(out.detectorsFired.PERSON).toBeGreaterThanOrEqual(1)
  })

  it("a short body is not queued behind a long one that keeps the only worker busy", async () => {
    const t = tokeniser({ kind: "builtin" }, { workers: 1 })
    // This thread's copy of the name model, loaded before the race starts (the worker loads its own).
    await loadBuiltinNameModel()
    const longClient = new AbortController()
    let longSettled = false
    const long = t.tokenise("chat.completions", chat(prose(200_000)), longClient.signal).finally(() => (longSettled = true))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const short = await t.tokenise("chat.completions", chat("Say hello to Ada Lovelace."), new AbortController().signal)
    expect(sent(short.bodyBytes)).not.toContain("Lovelace")
    expect(longSettled).toBe(false)
    longClient.abort(new Error("done waiting"))
    await expect(long).rejects.toThrow("done waiting")
  })

  it("an aborted signal refuses a short body at once, with the signal's reason", async () => {
    const controller = new AbortController()
    controller.abort(new Error("client left"))
    const t = tokeniser({ kind: "off" })
    await expect((async () => t.tokenise("chat.completions", chat("Say hello."), controller.signal))()).rejects.toThrow("client left")
  })
})

describe("workerTokeniser under MEDIA_POLICY=redact", () => {
  it("an image is redacted the same way on the calling thread as in a worker (each builds its own redactor): declared image-redacted, a PNG unlike the original", async () => {
    const { readFileSync } = await import("node:fs")
    const png = readFileSync(new URL("../../../fixtures/images/email.png", import.meta.url))
    const original = `data:image/png;base64,${png.toString("base64")}`
    const body = () => ({ model: "local-chat", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: original } }] }] })
    for (const t of [tokeniser({ kind: "off" }, { workers: 1, mediaPolicy: "redact", inlineMaxChars: 1_000_000 }), tokeniser({ kind: "off" }, { workers: 1, mediaPolicy: "redact", inlineMaxChars: 0 })]) {
      const out = await t.tokenise("chat.completions", body(), new AbortController().signal)
      expect(out.passthrough).toEqual([{ path: "/messages/0/content/0", kind: "image-redacted" }])
      const url: string = JSON.parse(sent(out.bodyBytes)).messages[0].content[0].image_url.url
      expect(url).toMatch(/^data:image\/png;base64,/)
      expect(url).not.toBe(original)
    }
  }, 60_000)
})
