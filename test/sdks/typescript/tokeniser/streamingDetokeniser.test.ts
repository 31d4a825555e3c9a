import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createSession, createStreamingDetokeniser, detokenise, tokeniseText } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const splitAt = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let at = 0
  for (const p of points) {
    chunks.push(text.slice(at, p))
    at = p
  }
  chunks.push(text.slice(at))
  return chunks
}

const streamed = (map: ReadonlyMap<string, string>, chunks: ReadonlyArray<string>): string => {
  const d = createStreamingDetokeniser(map)
  return chunks.map((c) => d.push(c)).join("") + d.flush()
}

describe("streaming detokeniser", () => {
  it("gives the same output as whole-text detokenise for any split into chunks", async () => {
    const session = createSession({ names: "off" })
    const original =
      "Write to jane@example.com or bob@example.org, call +44 20 7946 0958, card 4111 1111 1111 1111, IP 10.0.0.7."
    const tokenised = await tokeniseText(original, session)
    expect(session.map.size).toBe(5)
    // The model's answer: aliases reused, reordered, next to unknown tokens and stray brackets.
    const aliases = [...session.map.keys()]
    const answer = fc.array(
      fc.oneof(
        fc.constantFrom(...aliases),
        fc.constantFrom("<", ">", "<EMAIL_", "<EMAIL_9_abcd>", "<PHONE_1>", "<<", aliases[0]!.slice(0, 6)),
        fc.string({ unit: "grapheme", maxLength: 6 })
      ),
      { maxLength: 20 }
    )
    await fc.assert(
      fc.asyncProperty(answer.map((p) => p.join("")), fc.array(fc.nat(), { maxLength: 12 }), async (text, cuts) => {
        expect(streamed(session.map, splitAt(text, cuts))).toBe(detokenise(text, session.map))
      }),
      { numRuns: 3_000 }
    )
    expect(streamed(session.map, splitAt(tokenised, [3, 17, 18, 40]))).toBe(original)
  })

  it("holds back a partial alias until it completes, and releases text that cannot be an alias", async () => {
    const session = createSession({ names: "off" })
    const tokenised = await tokeniseText("mail a.b@example.com", session)
    const alias = [...session.map.keys()][0]!
    expect(tokenised).toBe(`mail ${alias}`)
    const d = createStreamingDetokeniser(session.map)
    expect(d.push("Hi " + alias.slice(0, 4))).toBe("Hi ")
    expect(d.push(alias.slice(4) + " <3")).toBe("a.b@example.com <3")
    expect(d.push(" <UNKNOWN>")).toBe(" <UNKNOWN>")
    expect(d.flush()).toBe("")
  })
})
