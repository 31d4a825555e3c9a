import type { AliasMap } from "./types.ts";
export interface StreamingDetokeniser {
    /** Feeds the next chunk; returns the text that is safe to show now. */
    readonly push: (chunk: string) => string;
    /** Ends the stream; returns whatever was held back. */
    readonly flush: () => string;
}
/**
 * Detokenises a stream whose chunk boundaries may cut an alias in two. An alias starts with its only
 * "<" and ends with its only ">", so only the text from the LAST "<" can be the start of an alias
 * still arriving: it is held back while it is a proper prefix of an alias in the map, and everything
 * before it is released. The concatenated output equals `detokenise` of the whole text.
 */
export declare const createStreamingDetokeniser: (map: AliasMap) => StreamingDetokeniser;
