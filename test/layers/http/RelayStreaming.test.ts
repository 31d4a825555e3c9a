import { request } from "node:http"
import { describe, expect, it } from "vitest"
import { openUpstreamRequests } from "../../../layers/relay/UpstreamClient.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture({}, { chunkDelayMs: 20 })

const streamBody = (model = "local-chat", content = "alpha beta gamma delta epsilon") =>
  JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content }] })

const until = async (cond: () => Promise<boolean> | boolean, ms = 3000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await cond()) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return false
}

describe("streamed relay", () => {
  it("relays SSE as it arrives, with the streaming headers, frames and terminator", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = streamBody()
    const started = Date.now()
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    expect(res.headers.get("cache-control")).toBe("no-cache, no-store, must-revalidate")
    expect(res.headers.get("x-accel-buffering")).toBe("no")
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(res.headers.get("x-response-time")).toMatch(/^\d+ms$/)

    const reader = res.body!.getReader()
    const first = await reader.read()
    const firstAt = Date.now() - started
    let text = new TextDecoder().decode(first.value)
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    const total = Date.now() - started
    // the first bytes reached us well before the provider finished (7 chunks, 20 ms apart)
    expect(firstAt).toBeLessThan(total - 60)
    const frames = text.split("\n\n").filter(Boolean)
    expect(frames[0]).toMatch(/^data: \{/)
    expect(JSON.parse(frames[0].slice(6)).object).toBe("chat.completion.chunk")
    expect(text).toContain("data: [DONE]\n\n")
    // after the terminator and a blank line: exactly one receipt-v2 frame whose data is the envelope
    const afterDone = text.slice(text.indexOf("data: [DONE]\n\n") + "data: [DONE]\n\n".length)
    expect(afterDone.startsWith("event: receipt-v2\ndata: {")).toBe(true)
    expect(afterDone.endsWith("\n\n")).toBe(true)
    const receipt = JSON.parse(afterDone.slice("event: receipt-v2\ndata: ".length).trim())
    expect(receipt).toMatchObject({ v: 2, alg: "ES256", chain: { chain_id: `receipt-v2-org-${orgId}`, seq: 1 } })
    expect((await fx.gw.query<{ receipt_jti: string }>("SELECT receipt_jti FROM usage_records WHERE org_id = $1", orgId))[0].receipt_jti).toBe(receipt.jti)
    // upstream bytes are relayed unchanged, so the transcript starts with exactly what the provider sent
    const usage = await fx.gw.query<{ estimated: boolean; partial: boolean; output_tokens: number }>(
      "SELECT estimated, partial, output_tokens FROM usage_records WHERE org_id = $1",
      orgId
    )
    expect(usage).toEqual([{ estimated: false, partial: false, output_tokens: 6 }])
  })

  it("ends cleanly without a trailer when the upstream cuts the stream, and meters the partial call", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = streamBody("cut-2")
    // cut-2 is not a catalogue model: use the behaviour switch on local-chat instead
    fx.provider.setBehaviour({ kind: "cut-stream", afterChunks: 2 })
    const real = streamBody()
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, ...(await attestedHeaders("chat.completions", real)) },
      body: real
    })
    expect(body).not.toBe(real)
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain("[DONE]")
    expect(text).not.toContain("event: receipt-v2")
    expect(await until(async () => (await fx.gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId)).length === 1)).toBe(true)
    const rows = await fx.gw.query<{ partial: boolean }>("SELECT partial FROM usage_records WHERE org_id = $1", orgId)
    expect(rows).toEqual([{ partial: true }])
    expect(await until(() => fx.provider.openRequests() === 0 && openUpstreamRequests() === 0)).toBe(true)
  })

  it("cancels the upstream request when the client disconnects mid-stream, and meters what was delivered", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = streamBody("local-chat", Array.from({ length: 60 }, (_, i) => `w${i}`).join(" "))
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) }
    const url = new URL(`${fx.gw.url}/api/v1/chat/completions`)
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers }, (res) => {
        res.once("data", () => {
          // got the first frame: hang up
          req.destroy()
          resolve()
        })
      })
      req.on("error", () => {})
      req.once("error", reject)
      req.end(body)
    })
    expect(await until(() => fx.provider.openRequests() === 0 && openUpstreamRequests() === 0)).toBe(true)
    expect(await until(async () => (await fx.gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId)).length === 1)).toBe(true)
    const rows = await fx.gw.query<{ partial: boolean; output_tokens: number }>("SELECT partial, output_tokens FROM usage_records WHERE org_id = $1", orgId)
    expect(rows[0].partial).toBe(true)
    expect(await fx.gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("a stream without usage is estimated, and never beyond max_tokens (the hold's cap): it bills no more than its hold", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    // No stream_options.include_usage: the provider reports no usage, the gateway estimates from the bytes relayed
    // (~900 "tokens" of SSE frames for this answer, whose text is a few tokens).
    const body = JSON.stringify({ model: "local-chat", stream: true, max_tokens: 8, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] })
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toContain("event: receipt-v2")
    expect(text.length / 4).toBeGreaterThan(8)
    const usage = await fx.gw.query<{ estimated: boolean; output_tokens: number; billed_micros: string }>(
      "SELECT estimated, output_tokens, billed_micros::text AS billed_micros FROM usage_records WHERE org_id = $1", orgId)
    expect(usage).toMatchObject([{ estimated: true, output_tokens: 8 }])
  })
})
