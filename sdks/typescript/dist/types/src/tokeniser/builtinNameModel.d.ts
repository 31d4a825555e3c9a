import type { NameModel } from "./NameModel.ts";
import type { Span } from "./types.ts";
/**
 * Finds names in `text` with compromise; runs in-process, nothing leaves the device. Its matcher's cost
 * grows faster than linearly with the length of `text`: the engine calls it on windows of a few KB
 * (detectSpans), never on a whole long text.
 */
export declare const detectNamesWithCompromise: (text: string) => Array<Span>;
export declare const builtinNameModel: NameModel;
