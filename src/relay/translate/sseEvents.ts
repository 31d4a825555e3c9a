/**
 * Splits an SSE byte stream (already decoded to text) into events: `event:` name and joined `data:` lines,
 * one event per blank line. Partial lines wait for the next push. Comments and other fields are skipped.
 */
export interface SseEvent {
  readonly event: string | undefined
  readonly data: string
}

export const createSseEventReader = () => {
  let partial = ""
  let event: string | undefined
  let data: Array<string> = []
  return {
    push(text: string): Array<SseEvent> {
      const out: Array<SseEvent> = []
      const lines = (partial + text).split("\n")
      partial = lines.pop() ?? ""
      for (const raw of lines) {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
        if (line === "") {
          if (data.length > 0) out.push({ event, data: data.join("\n") })
          event = undefined
          data = []
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5))
        } else if (line.startsWith("event:")) {
          event = line.slice(line.startsWith("event: ") ? 7 : 6)
        }
      }
      return out
    }
  }
}
