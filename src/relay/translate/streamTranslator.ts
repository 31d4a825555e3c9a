import type { UpstreamUsage } from "../usage.ts"
import { MalformedUpstream } from "./translationError.ts"

/** Rewrites an upstream stream into the client's format as it arrives. */
export interface StreamTranslator {
  /**
   * Upstream data in, client frames out (possibly empty). `text` is the chunk decoded as UTF-8 (SSE formats read
   * it); `bytes` is the same chunk undecoded, for a binary upstream framing (the relay always passes it). Throws `MalformedUpstream` on a frame
   * it cannot read; a chunk holding good frames before a bad one returns the good ones and throws on the next push
   * (`chunkByChunk`).
   */
  push(text: string, bytes?: Uint8Array): string
  /** True once the upstream's own end-of-answer event arrived and the client's terminal frames were written. */
  complete(): boolean
  /**
   * What to meter, for an upstream format the relay's SSE usage reader does not know (src/relay/usage.ts reads
   * OpenAI and Anthropic frames). Absent: the relay reads usage from the upstream bytes itself.
   */
  usage?(): UpstreamUsage
}

/**
 * Runs one chunk's translation, frame by frame through `emit`. A frame that cannot be read ends the answer as the
 * first bad frame always did (`MalformedUpstream`, the relay ends the stream as a cut one), but the frames before
 * it in the same chunk are handed over first: the failure is thrown by the next push, and if no chunk comes the
 * translator is not complete (no trailer, metered as partial). So what the client gets does not depend on where the
 * upstream's bytes were cut into chunks. Frames after the bad one are dropped, as they would be in later chunks.
 */
export const chunkByChunk = () => {
  let failed: MalformedUpstream | undefined
  return (translate: (emit: (frames: string) => void) => void): string => {
    if (failed !== undefined) throw failed
    let out = ""
    try {
      translate((frames) => {
        out += frames
      })
    } catch (e) {
      if (!(e instanceof MalformedUpstream) || out === "") throw e
      failed = e
    }
    return out
  }
}
