// Shared helpers of the webhook integration tests: a real receiver on 127.0.0.1, org/token set-up, event
// recording through the real Outbox service, and polling for asynchronous results.
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createOrg, createPortalToken } from "../../layers/AdminOperations.ts"
import { Outbox } from "../../services/Outbox.ts"
import type { TestGateway } from "../support/gateway.ts"

export interface ReceivedDelivery {
  readonly headers: IncomingHttpHeaders
  readonly rawBody: string
  readonly body: { event: string; event_id: string; timestamp: number; data: Record<string, unknown> }
  /** Receiver clock (ms) when the request was complete. */
  readonly at: number
}

/** What the receiver answers: a status, or "hang" to never answer (the dispatcher must time out). */
export type Answer = number | "hang"

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<ReceivedDelivery>
  /** TCP connections accepted, whether or not a request followed. */
  readonly connections: () => number
  readonly forEvent: (eventId: string) => Array<ReceivedDelivery>
  readonly close: () => Promise<void>
}

/**
 * A webhook receiver listening on 127.0.0.1 only. `answer` decides each response from the delivery and how many
 * deliveries with the same event_id arrived before it (0 for the first).
 */
export const startReceiver = async (
  answer: (delivery: ReceivedDelivery, previousForEvent: number) => Answer = () => 200
): Promise<Receiver> => {
  const received: Array<ReceivedDelivery> = []
  let connections = 0
  const hanging = new Set<() => void>()
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      const delivery: ReceivedDelivery = { headers: req.headers, rawBody, body: JSON.parse(rawBody), at: Date.now() }
      const previous = received.filter((r) => r.body.event_id === delivery.body.event_id).length
      received.push(delivery)
      const decision = answer(delivery, previous)
      if (decision === "hang") {
        hanging.add(() => res.destroy())
        return
      }
      res.writeHead(decision, { "content-type": "text/plain" }).end("ok")
    })
  })
  server.on("connection", () => {
    connections++
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    connections: () => connections,
    forEvent: (eventId) => received.filter((r) => r.body.event_id === eventId),
    close: async () => {
      for (const release of hanging) release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** A fresh organisation and a portal token holding `abilities` for it. */
export const orgWithToken = async (gw: TestGateway, abilities: Array<string>, name = "webhook test org") => {
  const { org_id } = await gw.runtime.runPromise(createOrg({ name }))
  const { token } = await gw.runtime.runPromise(createPortalToken({ org_id, abilities }))
  return { orgId: org_id as string, token: token as string }
}

/** Records an event through the gateway's real Outbox service, as a capability does in its transaction. */
export const recordEvent = (gw: TestGateway, orgId: string, event: string, data: Record<string, unknown>) =>
  gw.runtime.runPromise(Effect.flatMap(Effect.service(Outbox), (outbox) => outbox.record({ orgId, event, data }))) as Promise<string>

/** Calls a webhook management route with a portal token; returns status and parsed JSON (null for an empty body). */
export const api = async (gw: TestGateway, token: string | undefined, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, json: text === "" ? null : JSON.parse(text) }
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export const waitFor = async <A>(check: () => A | undefined | false | Promise<A | undefined | false>, timeoutMs = 10_000, what = "condition"): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
