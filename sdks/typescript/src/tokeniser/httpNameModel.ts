import { NameModelUnavailable, type NameModel } from "./NameModel.ts"
import type { Span } from "./types.ts"

export interface HttpNameModelOptions {
  /** The model endpoint, e.g. `http://127.0.0.1:9000/v1/entities`. */
  readonly url: string
  /** Milliseconds before the call counts as unavailable. Default 5000. */
  readonly timeoutMs?: number
  /** Extra request headers (e.g. an authorization header for the model service). */
  readonly headers?: Readonly<Record<string, string>>
  readonly fetch?: typeof globalThis.fetch
}

/**
 * HTTP name model. Contract (docs/tokeniser.md):
 *   POST <url>  Content-Type: application/json   body {"text": "<plain text>"}
 *   200         {"entities": [{"start": <int>, "end": <int>, "type": "PERSON"}, ...]}
 * Offsets are UTF-16 code unit indices into `text`, `end` exclusive. Entities of other types are
 * ignored. Any network error, timeout, non-2xx status or malformed body rejects with
 * NameModelUnavailable.
 */
export const httpNameModel = (options: HttpNameModelOptions): NameModel => ({
  detect: async (text, call) => {
    const doFetch = options.fetch ?? globalThis.fetch
    let response: Response
    try {
      response = await doFetch(options.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...options.headers },
        body: JSON.stringify({ text }),
        signal: AbortSignal.any([
          AbortSignal.timeout(options.timeoutMs ?? 5000),
          ...(call?.signal === undefined ? [] : [call.signal])
        ])
      })
    } catch (cause) {
      throw new NameModelUnavailable(`name model endpoint unreachable: ${options.url}`, cause)
    }
    if (!response.ok) {
      throw new NameModelUnavailable(`name model endpoint answered HTTP ${response.status}: ${options.url}`)
    }
    let payload: unknown
    try {
      payload = await response.json()
    } catch (cause) {
      throw new NameModelUnavailable("name model endpoint answered a body that is not JSON", cause)
    }
    const entities = (payload as { entities?: unknown })?.entities
    if (!Array.isArray(entities)) {
      throw new NameModelUnavailable('name model endpoint answered without an "entities" array')
    }
    const spans: Array<Span> = []
    for (const e of entities) {
      const { start, end, type } = (e ?? {}) as { start?: unknown; end?: unknown; type?: unknown }
      if (!Number.isInteger(start) || !Number.isInteger(end) || typeof type !== "string") {
        throw new NameModelUnavailable("name model endpoint answered a malformed entity")
      }
      const s = start as number
      const en = end as number
      if (s < 0 || en > text.length || en <= s) {
        throw new NameModelUnavailable("name model endpoint answered an entity outside the text")
      }
      if (type.toUpperCase() === "PERSON") spans.push({ start: s, end: en, type: "PERSON" })
    }
    return spans
  }
})
