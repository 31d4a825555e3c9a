import type { AliasMap } from "../../../src/tokeniser/types.ts";
export type StreamRoute = "chat.completions" | "messages";
/** One SSE event as the gateway sent it, after detokenisation. `data` is the raw data text. */
export interface SseEvent {
    readonly event: string | undefined;
    readonly data: string;
    /** The parsed JSON of `data`, when it is JSON. */
    readonly json: unknown;
}
export interface SseDetokeniser {
    /** Feeds gateway text; returns the complete events it finished, detokenised. */
    readonly push: (text: string) => ReadonlyArray<SseEvent>;
    /** The input ended: returns the last events (held-back text released); throws StreamError on a torn frame. */
    readonly end: () => ReadonlyArray<SseEvent>;
    /** The `receipt-v2` trailer's envelope, once seen. */
    readonly receipt: () => unknown;
    /** True once the stream's own end marker was seen (`[DONE]` or `message_stop`). */
    readonly completed: () => boolean;
}
export declare const serialiseEvent: (e: SseEvent) => string;
export declare const createSseDetokeniser: (route: StreamRoute, map: AliasMap) => SseDetokeniser;
