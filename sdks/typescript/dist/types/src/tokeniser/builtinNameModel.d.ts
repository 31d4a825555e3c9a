import type { NameModel } from "./NameModel.ts";
import type { Span } from "./types.ts";
/** Finds names in `text` with compromise's `people()`; runs in-process, nothing leaves the device. */
export declare const detectNamesWithCompromise: (text: string) => Array<Span>;
export declare const builtinNameModel: NameModel;
