import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { describe, expect, it } from "vitest"
import { anthropicErrorText } from "../../../../sdks/typescript/src/proxy/anthropicError.ts"
import { inProcessTokeniser, type RequestTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

/** A tokeniser that never finishes: with a short budget every request ends in 422 tokenisation_timeout. */
const neverDone: RequestTokeniser = {
  tokenise: (_route, _body, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
  close: async () => undefined
}

const caught = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error
  )

const BALANCE_MESSAGE = "The wallet has no available balance; top it up before relaying."
const noBalance = () =>
  new Response(JSON.stringify({ error: { code: "insufficient_balance", message: BALANCE_MESSAGE, balance_micros: 0 } }), {
    status: 402,
    headers: { "content-type": "application/json", "x-request-id": "5d0c7d9e-3f52-4c1b-9a55-6b8e2f7a1c20" }
  })

describe("local proxy error shapes", () => {
  it("Anthropic SDK: the proxy's own error on /v1/messages is readable (Anthropic shape, our code kept)", async () => {
    const proxy = await startStubbedProxy({ tokeniser: neverDone, tokeniseTimeoutMs: 50 })
    const anthropic = new Anthropic({ apiKey: "unused", baseURL: proxy.url, maxRetries: 0 })
    const error = await caught(
      anthropic.messages.create({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] })
    )
    expect(error).toBeInstanceOf(Anthropic.UnprocessableEntityError)
    const apiError = error as InstanceType<typeof Anthropic.APIError>
    expect(apiError.status).toBe(422)
    expect(apiError.message).toBe(
      "422 tokenising this request took longer than 50 ms; it was not sent (fail-closed). Send a shorter request, or raise TOKENISE_TIMEOUT_MS."
    )
    expect(apiError.type).toBe("invalid_request_error")
    expect(apiError.error).toMatchObject({ type: "error", error: { type: "invalid_request_error", code: "tokenisation_timeout" } })
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("Anthropic SDK: a gateway error passed through /v1/messages is readable too, with the gateway's code and fields", async () => {
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off") }, noBalance)
    const anthropic = new Anthropic({ apiKey: "unused", baseURL: proxy.url, maxRetries: 0 })
    const error = (await caught(
      anthropic.messages.create({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] })
    )) as InstanceType<typeof Anthropic.APIError>
    expect(error.status).toBe(402)
    expect(error.message).toBe(`402 ${BALANCE_MESSAGE}`)
    expect(error.type).toBe("billing_error")
    expect(error.error).toMatchObject({ error: { code: "insufficient_balance", balance_micros: 0 } })
  })

  it("OpenAI SDK: chat completions errors keep our envelope, and read well", async () => {
    const proxy = await startStubbedProxy({ tokeniser: neverDone, tokeniseTimeoutMs: 50 })
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
    })
    const body = await res.json()
    expect(body).toEqual({ error: { code: "tokenisation_timeout", message: expect.stringMatching(/^tokenising this request/) } })
    const openai = new OpenAI({ apiKey: "unused", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const error = (await caught(
      openai.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
    )) as InstanceType<typeof OpenAI.APIError>
    expect(error.status).toBe(422)
    expect(error.message).toMatch(/^422 tokenising this request took longer than 50 ms/)
    expect(error.code).toBe("tokenisation_timeout")
  })

  it("re-shaping leaves what is not our envelope as it is", () => {
    expect(anthropicErrorText(500, "not json")).toBe("not json")
    const anthropicShaped = JSON.stringify({ type: "error", error: { type: "api_error", message: "x" } })
    expect(anthropicErrorText(500, anthropicShaped)).toBe(anthropicShaped)
    expect(anthropicErrorText(500, JSON.stringify({ error: "plain" }))).toBe(JSON.stringify({ error: "plain" }))
  })
})
