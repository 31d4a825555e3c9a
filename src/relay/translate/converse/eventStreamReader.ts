/**
 * Splits an AWS event stream (`application/vnd.amazon.eventstream`, the framing of Bedrock's ConverseStream) into
 * messages as bytes arrive, and decodes each with @smithy/core's EventStreamCodec (prelude and message CRC32
 * checks, typed headers). Only the length-prefixed split is done here: the SDK's own splitter
 * (`getChunkedStream`) pulls from an async iterator and trusts any length, while the relay pushes chunks as they
 * arrive and must bound what one frame can make it buffer.
 *
 * Framing: https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html
 * (the same encoding for every AWS event stream) and
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html.
 */
import { EventStreamCodec } from "@smithy/core/event-streams"
import { fromUtf8, toUtf8 } from "@smithy/core/serde"
import { MalformedUpstream } from "../translationError.ts"

/** AWS event stream messages are at most 16 MiB (prelude + headers + payload + CRC). */
export const MAX_EVENT_STREAM_MESSAGE = 16 * 1024 * 1024
/** Prelude (total length, headers length, prelude CRC) plus the message CRC. */
const MIN_MESSAGE = 16

export interface EventStreamMessage {
  /** `:message-type`: `event`, `exception` or `error`. */
  readonly messageType: string
  /** `:event-type` of an event, `:exception-type` of an exception, `:error-code` of an error. */
  readonly type: string
  readonly payload: Uint8Array
}

const codec = new EventStreamCodec(toUtf8, fromUtf8)

const stringHeader = (headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined => {
  const h = headers[name]
  return h !== undefined && h.type === "string" && typeof h.value === "string" ? h.value : undefined
}

export const createEventStreamReader = () => {
  let buffer: Uint8Array = new Uint8Array(0)
  return {
    /**
     * Bytes in, whole messages out, one at a time (so the messages before a bad frame are still handed over);
     * throws `MalformedUpstream` when the iteration reaches a frame that cannot be one.
     */
    *push(chunk: Uint8Array): Generator<EventStreamMessage> {
      if (buffer.byteLength === 0) buffer = chunk
      else {
        const joined = new Uint8Array(buffer.byteLength + chunk.byteLength)
        joined.set(buffer)
        joined.set(chunk, buffer.byteLength)
        buffer = joined
      }
      while (buffer.byteLength >= 4) {
        const length = new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, false)
        if (length < MIN_MESSAGE || length > MAX_EVENT_STREAM_MESSAGE) throw new MalformedUpstream("event stream frame length out of range")
        if (buffer.byteLength < length) break
        let message
        try {
          message = codec.decode(buffer.subarray(0, length))
        } catch {
          throw new MalformedUpstream("event stream frame fails its checksum or header encoding")
        }
        buffer = buffer.subarray(length)
        const headers = message.headers as Record<string, { type: string; value: unknown }>
        const messageType = stringHeader(headers, ":message-type") ?? "event"
        const type = messageType === "event"
          ? stringHeader(headers, ":event-type")
          : messageType === "exception"
          ? stringHeader(headers, ":exception-type")
          : stringHeader(headers, ":error-code")
        yield { messageType, type: type ?? "", payload: message.body }
      }
    },
    /** Bytes of an unfinished frame (a stream that ends with some is cut). */
    pending: () => buffer.byteLength
  }
}

/** One AWS event stream message (for the fake provider and tests): a JSON event with the headers Bedrock sends. */
export const encodeEvent = (eventType: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: {
      ":message-type": { type: "string", value: "event" },
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" }
    },
    body: fromUtf8(JSON.stringify(payload))
  })

/** An exception message, as Bedrock sends one mid-stream (`throttlingException`, `internalServerException`, ...). */
export const encodeException = (exceptionType: string, message: string): Uint8Array =>
  codec.encode({
    headers: {
      ":message-type": { type: "string", value: "exception" },
      ":exception-type": { type: "string", value: exceptionType },
      ":content-type": { type: "string", value: "application/json" }
    },
    body: fromUtf8(JSON.stringify({ message }))
  })
