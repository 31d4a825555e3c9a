/**
 * The gateway's answer as the local proxy uses it: status, the headers it passes back or reads, and the body read
 * whole (`text`) or as it arrives (`stream`, an event stream). The proxy's own undici client (gatewayFetch.ts) makes
 * one straight from undici's answer; a `fetch` given to the proxy (tests observe egress through theirs) answers a
 * WHATWG Response, read through answerOfResponse. Issue 41: building a Headers and a Response per answer, then a
 * second pair with the originals restored (relayExchange's restoredAnswer), cost the proxy about 45 us of CPU per
 * "Say hello." call for what is a status, six headers and a string.
 */

export interface GatewayAnswer {
  readonly status: number
  /** Lower-case names; a repeated header's values joined with ", ", as Headers.get gives them. */
  readonly headers: Readonly<Record<string, string>>
  /** The whole body as UTF-8 text. Read once: `text` or `stream`, not both. */
  readonly text: () => Promise<string>
  /** The body as it arrives (an event stream). */
  readonly stream: () => ReadableStream<Uint8Array>
}

export const isOk = (answer: GatewayAnswer): boolean => answer.status >= 200 && answer.status < 300

const emptyStream = (): ReadableStream<Uint8Array> => new ReadableStream({ start: (controller) => controller.close() })

export const answerOfResponse = (response: Response): GatewayAnswer => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return { status: response.status, headers, text: () => response.text(), stream: () => response.body ?? emptyStream() }
}
