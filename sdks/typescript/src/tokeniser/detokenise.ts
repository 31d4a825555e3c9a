import { ALIAS_PATTERN } from "./alias.ts"
import type { AliasMap } from "./types.ts"

/** Restores the originals of aliases present in `map`; any other token-looking text is left untouched. */
export const detokenise = (text: string, map: AliasMap): string =>
  text.replace(new RegExp(ALIAS_PATTERN.source, "g"), (alias) => map.get(alias) ?? alias)
