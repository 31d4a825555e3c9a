import type { TokeniserSession } from "./session.ts";
import type { Span } from "./types.ts";
/** Every value the session's detectors and name model find in `text`, non-overlapping, in text order. */
export declare const detectSpans: (text: string, session: TokeniserSession) => Promise<Array<Span>>;
/**
 * Replaces every detected value in `text` with its alias in `session`. The same value gets the same
 * alias everywhere in the session (one request).
 */
export declare const tokeniseText: (text: string, session: TokeniserSession) => Promise<string>;
