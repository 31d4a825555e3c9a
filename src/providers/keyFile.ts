/**
 * The pooled-key file named by PROVIDER_<SLUG>_API_KEY_FILE: one key per line, blank lines and `#` comments ignored.
 * A file holding one key (with or without a trailing newline) reads as before.
 */
export const parseKeyFile = (text: string): ReadonlyArray<string> =>
  text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))

/** How a key is named anywhere outside the gateway's memory: its position, never the key or part of it. */
export const keySlotLabel = (slot: { readonly index: number; readonly count: number }): string =>
  `key ${slot.index + 1} of ${slot.count}`
