import type { AliasMap } from "../tokeniser/types.ts";
export declare const detokeniseResponseText: (text: string, map: AliasMap) => string;
