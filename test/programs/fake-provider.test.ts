import Anthropic from "@anthropic-ai/sdk"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import OpenAI from "openai"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  fakeCompletionTokens,
  fakeEmbedding,
  fakePromptTokens,
  fakeReplyText,
  type FakeProvider,
  startFakeProvider
} from "../../programs/fake-provider.ts"
import { fakeProviderControl } from "../support/fake-provider-client.ts"

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time")
    await new Promise((r) => setTimeout(r, 10))
  }
}

let provider: FakeProvider
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
  // No retries: injected failures must surface on the first attempt.
  openai = new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "x", maxRetries: 0 })
  anthropic = new Anthropic({ baseURL: provider.url, apiKey: "x", maxRetries: 0 })
})

afterAll(async () => {
  await provider.close()
})

afterEach(async () => {
  // Every test leaves no request hanging behind it.
  await waitFor(() => provider.openRequests() === 0)
  provider.reset()
})

describe("fake provider: OpenAI chat completions", () => {
  it("listens on an ephemeral 127.0.0.1 port and reports its origin without /v1", () => {
    expect(provider.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(provider.url.endsWith(":8788")).toBe(false)
  })

  it("answers a non-stream completion echoing the last user message, with usage derived from the body", async () => {
    const completion = await openai.chat.completions.create({
      model: "local-chat",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "hello <PERSON_1> there" }
      ]
    })
    const reply = fakeReplyText("hello <PERSON_1> there")
    expect(reply).toBe("Echo: hello <PERSON_1> there")
    expect(completion.object).toBe("chat.completion")
    expect(completion.id).toMatch(/^chatcmpl-/)
    expect(completion.model).toBe("local-chat")
    expect(completion.choices[0]!.message.content).toBe(reply)
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect(provider.received).toHaveLength(1)
    const sentBytes = provider.received[0]!.body.length
    expect(completion.usage).toEqual({
      prompt_tokens: Math.ceil(sentBytes / 4),
      completion_tokens: 4,
      total_tokens: Math.ceil(sentBytes / 4) + 4
    })
    expect(fakeCompletionTokens(reply)).toBe(4)
    expect(fakePromptTokens(sentBytes)).toBe(Math.ceil(sentBytes / 4))
  })

  it("joins array content parts of the last user message", async () => {
    const completion = await openai.chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: [{ type: "text", text: "part one" }, { type: "text", text: "part two" }] }]
    })
    expect(completion.choices[0]!.message.content).toBe("Echo: part one\npart two")
  })

  it("streams the reply word by word, then finish_reason stop, a usage chunk and [DONE]", async () => {
    const stream = await openai.chat.completions.create({
      model: "local-chat",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "alpha beta gamma delta" }]
    })
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const c of stream) chunks.push(c)
    const contentChunks = chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "")
    expect(contentChunks.length).toBe(5) // "Echo: " + four words
    expect(contentChunks[0]!.choices[0]!.delta.role).toBe("assistant")
    expect(contentChunks.map((c) => c.choices[0]!.delta.content).join("")).toBe(fakeReplyText("alpha beta gamma delta"))
    const stop = chunks.find((c) => c.choices[0]?.finish_reason === "stop")
    expect(stop).toBeDefined()
    const usageChunk = chunks[chunks.length - 1]!
    expect(usageChunk.choices).toEqual([])
    expect(usageChunk.usage?.completion_tokens).toBe(5)
    expect(usageChunk.usage?.prompt_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
  })

  it("omits the usage chunk when include_usage is not requested, and ends with data: [DONE]", async () => {
    const res = await fetch(`${provider.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: "hi" }] })
    })
    expect(res.headers.get("content-type")).toBe("text/event-stream")
    const text = await res.text()
    const frames = text.split("\n\n").filter((f) => f !== "")
    expect(frames.every((f) => f.startsWith("data: "))).toBe(true)
    expect(frames[frames.length - 1]).toBe("data: [DONE]")
    expect(text).not.toContain("\"usage\"")
  })

  it("delivers stream frames incrementally when chunkDelayMs is set", async () => {
    const slow = await startFakeProvider({ port: 0, chunkDelayMs: 40 })
    try {
      const client = new OpenAI({ baseURL: `${slow.url}/v1`, apiKey: "x", maxRetries: 0 })
      const stream = await client.chat.completions.create({
        model: "local-chat",
        stream: true,
        messages: [{ role: "user", content: "one two three four" }]
      })
      const arrivals: number[] = []
      for await (const _ of stream) arrivals.push(Date.now())
      // 6 frames 40 ms apart: the first must arrive well before the last.
      expect(arrivals.length).toBe(6)
      expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThanOrEqual(150)
    } finally {
      await slow.close()
    }
  })
})

describe("fake provider: embeddings and models", () => {
  it("answers deterministic 8-float embeddings through the SDK (base64 by default) and as floats", async () => {
    const viaSdk = await openai.embeddings.create({ model: "local-embed", input: ["a", "b"] })
    expect(viaSdk.object).toBe("list")
    expect(viaSdk.data.map((d) => d.index)).toEqual([0, 1])
    expect(viaSdk.data[0]!.embedding).toEqual(fakeEmbedding("a"))
    expect(viaSdk.data[1]!.embedding).toEqual(fakeEmbedding("b"))
    expect(viaSdk.data[0]!.embedding).toHaveLength(8)
    expect(viaSdk.data[0]!.embedding).not.toEqual(viaSdk.data[1]!.embedding)
    expect(viaSdk.usage.prompt_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))

    const asFloats = await openai.embeddings.create({ model: "local-embed", input: "a", encoding_format: "float" })
    expect(asFloats.data).toHaveLength(1)
    expect(asFloats.data[0]!.embedding).toEqual(fakeEmbedding("a"))
    for (const x of asFloats.data[0]!.embedding) {
      expect(x).toBeGreaterThanOrEqual(-1)
      expect(x).toBeLessThan(1)
    }
  })

  it("lists local-chat and local-embed in OpenAI list format", async () => {
    const ids: string[] = []
    for await (const m of openai.models.list()) ids.push(m.id)
    expect(ids).toContain("local-chat")
    expect(ids).toContain("local-embed")
  })
})

describe("fake provider: Anthropic messages", () => {
  it("answers a non-stream message echoing string or text-block content", async () => {
    const msg = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: "bonjour <EMAIL_1>" }] }]
    })
    expect(msg.type).toBe("message")
    expect(msg.id).toMatch(/^msg_/)
    expect(msg.role).toBe("assistant")
    expect(msg.content).toEqual([{ type: "text", text: "Echo: bonjour <EMAIL_1>" }])
    expect(msg.stop_reason).toBe("end_turn")
    expect(msg.usage.input_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))
    expect(msg.usage.output_tokens).toBe(3)

    const plain = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 100,
      messages: [{ role: "user", content: "plain string" }]
    })
    expect(plain.content).toEqual([{ type: "text", text: "Echo: plain string" }])
  })

  it("streams the Anthropic event sequence and the SDK assembles the final message", async () => {
    const stream = anthropic.messages.stream({
      model: "local-chat",
      max_tokens: 100,
      messages: [{ role: "user", content: "stream me please" }]
    })
    const deltas: string[] = []
    const eventTypes: string[] = []
    stream.on("text", (t) => deltas.push(t))
    stream.on("streamEvent", (e) => eventTypes.push(e.type))
    const final = await stream.finalMessage()
    expect(deltas.length).toBe(4)
    expect(deltas.join("")).toBe("Echo: stream me please")
    expect(final.content).toEqual([{ type: "text", text: "Echo: stream me please" }])
    expect(final.stop_reason).toBe("end_turn")
    expect(final.usage.output_tokens).toBe(4)
    expect(final.usage.input_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))
    expect(eventTypes[0]).toBe("message_start")
    expect(eventTypes).toContain("content_block_start")
    expect(eventTypes).toContain("content_block_stop")
    expect(eventTypes.slice(-2)).toEqual(["message_delta", "message_stop"])
  })
})

describe("fake provider: error injection", () => {
  it("answers 500 and 429 for models fail-500 and fail-429 (OpenAI and Anthropic shapes)", async () => {
    const e500 = await openai.chat.completions
      .create({ model: "fail-500", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)
    expect(e500).toBeInstanceOf(OpenAI.APIError)
    expect((e500 as InstanceType<typeof OpenAI.APIError>).status).toBe(500)

    const e429 = await openai.chat.completions
      .create({ model: "fail-429", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)
    expect(e429).toBeInstanceOf(OpenAI.RateLimitError)

    const a500 = await anthropic.messages
      .create({ model: "fail-500", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)
    expect(a500).toBeInstanceOf(Anthropic.InternalServerError)

    const raw = await fetch(`${provider.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ model: "fail-429", messages: [] })
    })
    expect(raw.status).toBe(429)
    expect(await raw.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } })
    // Failed calls are still recorded.
    expect(provider.received).toHaveLength(4)
  })

  it("answers the status named by the x-fake-status header with an OpenAI error body", async () => {
    const res = await fetch(`${provider.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "x-fake-status": "503" },
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "x" }] })
    })
    expect(res.status).toBe(503)
    expect(await res.json()).toMatchObject({ error: { type: "server_error" } })
  })

  it("delays by model slow-<ms> and by the x-fake-delay-ms header", async () => {
    let started = Date.now()
    const completion = await openai.chat.completions.create({ model: "slow-150", messages: [{ role: "user", content: "z" }] })
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(completion.choices[0]!.message.content).toBe("Echo: z")

    started = Date.now()
    const res = await fetch(`${provider.url}/v1/models`, { headers: { "x-fake-delay-ms": "120" } })
    expect(res.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(110)
  })

  it("applies setBehaviour to subsequent requests until reset()", async () => {
    provider.setBehaviour({ kind: "status", status: 502, body: { custom: true } })
    const res = await fetch(`${provider.url}/v1/models`)
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ custom: true })
    provider.reset()
    expect(provider.received).toHaveLength(0)
    expect((await fetch(`${provider.url}/v1/models`)).status).toBe(200)
  })

  it("cuts a stream after n frames for model cut-<n>: the SDK sees an error before the end", async () => {
    const stream = await openai.chat.completions.create({
      model: "cut-2",
      stream: true,
      messages: [{ role: "user", content: "a b c d e f g h" }]
    })
    const got: string[] = []
    const outcome = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta.content ?? "")
      return "completed"
    })().catch(() => "errored")
    expect(outcome).toBe("errored")
    expect(got.join("")).not.toBe(fakeReplyText("a b c d e f g h"))
    expect(got.length).toBeLessThanOrEqual(2)
  })

  it("cuts after exactly n frames for x-fake-cut-after, with the connection dropped", async () => {
    const res = await fetch(`${provider.url}/v1/messages`, {
      method: "POST",
      headers: { "x-fake-cut-after": "3" },
      body: JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: "x y z" }] })
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    let text = ""
    const decoder = new TextDecoder()
    const ended = await (async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return "clean end"
        text += decoder.decode(value, { stream: true })
      }
    })().catch(() => "error")
    expect(ended).toBe("error")
    const events = text.split("\n\n").filter((f) => f !== "").map((f) => f.split("\n")[0])
    expect(events).toEqual(["event: message_start", "event: content_block_start", "event: ping"])
  })

  it("cuts a non-stream body halfway for cut-<n>", async () => {
    const outcome = await openai.chat.completions
      .create({ model: "cut-1", messages: [{ role: "user", content: "x" }] })
      .then(() => "completed", () => "errored")
    expect(outcome).toBe("errored")
  })

  it("never answers model hang; when the client aborts, openRequests() returns to 0", async () => {
    const controller = new AbortController()
    const pending = fetch(`${provider.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "hang", messages: [{ role: "user", content: "x" }] }),
      signal: controller.signal
    }).catch((e: unknown) => e)
    await waitFor(() => provider.openRequests() === 1)
    expect(provider.received).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 100))
    expect(provider.openRequests()).toBe(1) // still hanging
    controller.abort()
    expect(await pending).toBeInstanceOf(Error)
    await waitFor(() => provider.openRequests() === 0)
  })

  it("hangs on x-fake-hang and on setBehaviour hang, so an SDK timeout fires", async () => {
    provider.setBehaviour({ kind: "hang" })
    const started = Date.now()
    const err = await openai.chat.completions
      .create({ model: "local-chat", messages: [{ role: "user", content: "x" }] }, { timeout: 200 })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(190)
    await waitFor(() => provider.openRequests() === 0)
    provider.reset()

    const controller = new AbortController()
    const pending = fetch(`${provider.url}/v1/models`, { headers: { "x-fake-hang": "1" }, signal: controller.signal })
      .catch((e: unknown) => e)
    await waitFor(() => provider.openRequests() === 1)
    controller.abort()
    expect(await pending).toBeInstanceOf(Error)
  })

  it("close() ends even while a request hangs", async () => {
    const p = await startFakeProvider({ port: 0 })
    const pending = fetch(`${p.url}/v1/models`, { headers: { "x-fake-hang": "1" } }).catch((e: unknown) => e)
    await waitFor(() => p.openRequests() === 1)
    await p.close()
    expect(await pending).toBeInstanceOf(Error)
  })
})

describe("fake provider: recording and bad input", () => {
  it("records the exact raw body bytes and the headers of each request, in order", async () => {
    const odd = "{ \"model\" :\"local-chat\",\n\t\"messages\":[ {\"role\":\"user\",  \"content\":\"caf\u00e9 \u2603\"} ]   }\r\n"
    const sent = Buffer.from(odd, "utf8")
    const res = await fetch(`${provider.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "req-123" },
      body: sent
    })
    const json = (await res.json()) as { choices: Array<{ message: { content: string } }> }
    expect(json.choices[0]!.message.content).toBe("Echo: caf\u00e9 \u2603")
    await fetch(`${provider.url}/v1/models`)
    expect(provider.received.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/chat/completions", "GET /v1/models"])
    const rec = provider.received[0]!
    expect(Buffer.isBuffer(rec.body)).toBe(true)
    expect(rec.body.equals(sent)).toBe(true)
    expect(rec.headers["x-request-id"]).toBe("req-123")
    expect(rec.headers["content-type"]).toBe("application/json")
    expect(typeof rec.at).toBe("number")
  })

  it("answers 400 with an error body for bad JSON, still recording the request", async () => {
    const res = await fetch(`${provider.url}/v1/chat/completions`, { method: "POST", body: "{not json" })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_json" } })
    expect(provider.received[0]!.body.toString()).toBe("{not json")

    const anth = await fetch(`${provider.url}/v1/messages`, { method: "POST", body: "[" })
    expect(anth.status).toBe(400)
    expect(await anth.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
  })

  it("answers 404 JSON for unknown paths and 405 for the wrong method", async () => {
    const res = await fetch(`${provider.url}/v2/nothing`)
    expect(res.status).toBe(404)
    expect(res.headers.get("content-type")).toBe("application/json")
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } })
    const wrong = await fetch(`${provider.url}/v1/chat/completions`)
    expect(wrong.status).toBe(405)
  })

  it("exposes received, open, reset and behaviour over /_fake/* for other processes", async () => {
    const control = fakeProviderControl(provider.url)
    await fetch(`${provider.url}/v1/embeddings`, { method: "POST", body: "{\"input\":\"q\"}" })
    const summary = await control.received()
    expect(summary.count).toBe(1)
    expect(summary.total_since_reset).toBe(1)
    expect(summary.requests[0]).toMatchObject({ method: "POST", path: "/v1/embeddings", body: "{\"input\":\"q\"}" })
    expect(await control.open()).toBe(0)

    await control.setBehaviour({ kind: "status", status: 418 })
    expect((await fetch(`${provider.url}/v1/models`)).status).toBe(418)
    await control.reset()
    expect((await control.received()).count).toBe(0)
    expect((await fetch(`${provider.url}/v1/models`)).status).toBe(200)
    // Control calls themselves are not recorded.
    expect(provider.received.map((r) => r.path)).toEqual(["/v1/models"])

    const bad = await fetch(`${provider.url}/_fake/behaviour`, { method: "POST", body: "{\"kind\":\"explode\"}" })
    expect(bad.status).toBe(400)
  })
})

describe("fake provider: bounded recording", () => {
  it("keeps only the most recent maxRecorded requests while counting all of them", async () => {
    const p = await startFakeProvider({ port: 0, maxRecorded: 2 })
    try {
      for (const path of ["/v1/models", "/a", "/b"]) await (await fetch(`${p.url}${path}`)).text()
      expect(p.received.map((r) => r.path)).toEqual(["/a", "/b"])
      const summary = await fakeProviderControl(p.url).received()
      expect(summary.count).toBe(2)
      expect(summary.total_since_reset).toBe(3)
    } finally {
      await p.close()
    }
  })
})

describe("fake provider: as a program", () => {
  it("logs one JSON line with its URL and serves requests until SIGTERM", async () => {
    const script = fileURLToPath(new URL("../../programs/fake-provider.ts", import.meta.url))
    const child = spawn(process.execPath, [script, "--port", "0"], {
      env: { ...process.env, FAKE_PROVIDER_HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString()
          const nl = out.indexOf("\n")
          if (nl >= 0) resolve(out.slice(0, nl))
        })
        child.once("exit", (code) => reject(new Error(`exited early with ${code}`)))
      })
      const logged = JSON.parse(line) as { url: string }
      expect(logged.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const res = await fetch(`${logged.url}/v1/models`)
      expect(res.status).toBe(200)
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  })
})
