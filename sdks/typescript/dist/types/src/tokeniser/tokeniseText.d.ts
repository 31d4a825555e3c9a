import { type Checkpoint } from "./checkpoint.ts";
import type { TokeniserSession } from "./session.ts";
import { type WindowOptions } from "./textWindows.ts";
import type { Span } from "./types.ts";
export interface DetectOptions {
    /** Aborting it stops the work at the next checkpoint; the promise rejects with the signal's reason. */
    readonly signal?: AbortSignal;
    /** Shared by every text of one request, so yields are paced across the request; default: a new one. */
    readonly checkpoint?: Checkpoint;
    /** Window sizes (tests use small ones to put cuts where they want them). */
    readonly windows?: WindowOptions;
}
/**
 * Every value the session's detectors and name model find in `text`, non-overlapping, in text order.
 * Long texts are scanned window by window (textWindows.ts), so the cost grows linearly with the length;
 * a window whose text and cut positions were already scanned in this call (repeated text) is not
 * scanned again. Between windows the checkpoint stops on abort and yields to the event loop.
 */
export declare const detectSpans: (text: string, session: TokeniserSession, options?: DetectOptions) => Promise<Array<Span>>;
/**
 * Replaces every detected value in `text` with its alias in `session`. The same value gets the same
 * alias everywhere in the session (one request).
 */
export declare const tokeniseText: (text: string, session: TokeniserSession, options?: DetectOptions) => Promise<string>;
