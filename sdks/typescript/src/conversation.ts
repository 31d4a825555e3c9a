/**
 * A multi-turn Responses API conversation whose history and aliases stay on this device (`client.conversations`).
 *
 * The provider cannot hold the earlier turns for us (`previous_response_id` / `conversation`): it would answer from
 * aliases the next request does not know, so the egress policy refuses both (docs/proxy.md). Instead the conversation
 * keeps every turn's input and the model's output items here, as originals, and sends them again on each turn. They are
 * tokenised under one alias secret held for the conversation's life: aliases are numbered by first appearance and the
 * earlier turns come first, so a value keeps the alias it had on its first turn, the prefix the provider sees is the
 * same bytes turn after turn (its prompt cache still works), and an answer that names an earlier turn's alias is
 * restored like any other.
 */
import { ConflictError, InvalidRequestError } from "./errors.ts"
import type { CallOptions, RelayStream, WithMeta } from "./RelayClient.ts"

type Json = Record<string, any>

/** One relay call of the Responses route, tokenised under the conversation's alias secret. */
export type ConversationRelay = (body: Json, options: CallOptions, aliasSecret: Uint8Array) => Promise<WithMeta<Json> | RelayStream<Json>>

/** What the provider must not be asked to remember: the conversation carries its history itself. */
const SERVER_STATE_FIELDS = ["previous_response_id", "conversation"] as const

const inputItems = (input: unknown): Array<Json> => {
  if (typeof input === "string") return [{ role: "user", content: input }]
  if (Array.isArray(input)) return input as Array<Json>
  throw new InvalidRequestError({ status: 0, code: "invalid_request", message: "conversation.responses.create needs `input`: a string or an array of input items.", body: { code: "invalid_request", message: "input must be a string or an array", details: { path: "input" } } })
}

export class Conversation {
  readonly #relay: ConversationRelay
  // Never leaves the device: the per-call alias secret of every turn (see the file's comment).
  readonly #aliasSecret = globalThis.crypto.getRandomValues(new Uint8Array(32))
  readonly #items: Array<Json> = []
  readonly #aliases = new Map<string, string>()
  #turnRunning = false

  /** `responses.create`: one turn (JSON or streamed); the earlier turns are sent before this turn's `input`. */
  readonly responses: {
    readonly create: {
      (body: Json & { stream: true }, options?: CallOptions): Promise<RelayStream<Json>>
      (body: Json, options?: CallOptions): Promise<WithMeta<Json>>
    }
  }

  constructor(relay: ConversationRelay) {
    this.#relay = relay
    this.responses = { create: ((body: Json, options?: CallOptions) => this.#turn(body, options ?? {})) as any }
  }

  /** Every turn so far, as originals: this turn's input items, then the model's output items (messages, function calls). */
  get items(): ReadonlyArray<Json> {
    return this.#items
  }

  /** Alias -> original over every turn; they stay on this device. */
  get aliases(): ReadonlyMap<string, string> {
    return this.#aliases
  }

  async #turn(body: Json, options: CallOptions): Promise<WithMeta<Json> | RelayStream<Json>> {
    for (const field of SERVER_STATE_FIELDS) {
      if (body[field] !== undefined && body[field] !== null) {
        throw new InvalidRequestError({
          status: 0,
          code: "invalid_request",
          message: `A conversation keeps its history on this device; drop "${field}" (the provider would answer from aliases this device cannot restore). Nothing was sent.`,
          body: { code: "invalid_request", message: `"${field}" is not used in a conversation`, details: { path: field } }
        })
      }
    }
    const turnInput = inputItems(body.input)
    // One turn at a time: the next turn's history is this one's answer.
    if (this.#turnRunning) {
      throw new ConflictError({ status: 0, code: "conversation_busy", message: "This conversation's previous turn has not finished (a streamed turn finishes when its stream has been read to the end). Nothing was sent." })
    }
    this.#turnRunning = true
    let answer: WithMeta<Json> | RelayStream<Json>
    try {
      answer = await this.#relay({ ...body, input: [...this.#items, ...turnInput] }, options, this.#aliasSecret)
    } catch (error) {
      this.#turnRunning = false
      throw error
    }
    if (body.stream !== true) {
      this.#finish(turnInput, (answer as WithMeta<Json>).output, answer.aliases)
      return answer
    }
    return this.#watch(answer as RelayStream<Json>, turnInput)
  }

  /** A turn joins the history only once its answer is whole; a refused, failed or cut turn leaves the history as it was. */
  #finish(turnInput: ReadonlyArray<Json>, output: unknown, aliases: ReadonlyMap<string, string>) {
    this.#turnRunning = false
    if (!Array.isArray(output)) return
    this.#items.push(...turnInput, ...output)
    for (const [alias, original] of aliases) this.#aliases.set(alias, original)
  }

  /** The same stream, read through: `response.completed`'s output (already restored) becomes history when the stream ends whole. */
  #watch(stream: RelayStream<Json>, turnInput: ReadonlyArray<Json>): RelayStream<Json> {
    const iterate = stream[Symbol.asyncIterator].bind(stream)
    const finish = (output: unknown) => this.#finish(turnInput, output, stream.aliases)
    const release = () => void (this.#turnRunning = false)
    stream[Symbol.asyncIterator] = async function*() {
      let output: unknown
      let whole = false
      try {
        for await (const event of { [Symbol.asyncIterator]: iterate }) {
          if (event.type === "response.completed") output = event.response?.output
          yield event
        }
        whole = true
      } finally {
        if (whole) finish(output)
        else release()
      }
    }
    return stream
  }
}
