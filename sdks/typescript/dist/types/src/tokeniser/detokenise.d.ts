import type { AliasMap } from "./types.ts";
/** Restores the originals of aliases present in `map`; any other token-looking text is left untouched. */
export declare const detokenise: (text: string, map: AliasMap) => string;
