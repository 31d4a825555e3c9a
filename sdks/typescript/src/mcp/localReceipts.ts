/**
 * The receipts this client has received, kept on the device as they arrive: appended to a JSON Lines file (mode
 * 0600) so `list_receipts`, `get_receipt`, `receipt_chain_export` and `chain_verify` work across restarts. A receipt
 * holds hashes, token counts and chain links, never content, so keeping it is safe.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs"
import { dirname } from "node:path"

export type Receipt = Record<string, any>

export interface LocalReceipts {
  readonly add: (receipt: Receipt) => void
  readonly all: () => ReadonlyArray<Receipt>
  readonly byJti: (jti: string) => Receipt | undefined
}

export const createLocalReceipts = (file: string | undefined): LocalReceipts => {
  let loaded: Array<Receipt> | undefined
  const load = (): Array<Receipt> => {
    if (loaded !== undefined) return loaded
    loaded = []
    if (file === undefined) return loaded
    let text = ""
    try {
      text = readFileSync(file, "utf8")
    } catch {
      return loaded
    }
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue
      try {
        loaded.push(JSON.parse(line))
      } catch {
        // A line cut by a crash mid-write: skipped, the others stay usable.
      }
    }
    return loaded
  }
  return {
    add: (receipt) => {
      const list = load()
      if (typeof receipt.jti === "string" && list.some((r) => r.jti === receipt.jti && r.v === receipt.v)) return
      list.push(receipt)
      if (file !== undefined) {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
        appendFileSync(file, `${JSON.stringify(receipt)}\n`, { mode: 0o600 })
      }
    },
    all: () => load(),
    byJti: (jti) => load().find((r) => r.jti === jti)
  }
}
