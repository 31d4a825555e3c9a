/**
 * `node bench/perfMap.ts /tmp/perf-<pid>.map`: makes a `--perf-basic-prof` map name each sample after the code that
 * was really there. V8 appends a line for every code object it creates and never says when one is collected, so
 * after a while of load the map lists several objects for the same addresses (start-up code collected, its space
 * reused by code optimised later), and `perf report` names a sample after the first of them: in a 15 s profile of
 * the gateway, the attestation's verify showed up as the router's start-up `FindMyWay._on` and the receipt
 * signing as `rfc3339Millis`. This keeps, for every address, only the newest object that covers it (rewriting the
 * file in place; run it after `perf record` and before `perf report`/`perf script`). Start the gateway with
 * `--no-compact-code-space` too (FRONT_NODE_FLAGS in bench/frontStages.ts), or V8 moves code without a new line.
 */
import { readFileSync, writeFileSync } from "node:fs"

interface CodeObject {
  readonly start: bigint
  readonly end: bigint
  readonly line: string
}

/** The map's lines with every range already covered by a newer object dropped, in address order. */
export const newestCodeObjects = (text: string): Array<string> => {
  const objects: Array<CodeObject> = []
  for (const line of text.split("\n")) {
    const [start, size] = line.split(" ", 2)
    if (start === undefined || size === undefined || !/^[0-9a-f]+$/i.test(start) || !/^[0-9a-f]+$/i.test(size)) continue
    const from = BigInt(`0x${start}`)
    objects.push({ start: from, end: from + BigInt(`0x${size}`), line })
  }
  // Newest first; an object is kept when it overlaps none of the (newer) objects kept so far.
  const kept: Array<CodeObject> = []
  for (let i = objects.length - 1; i >= 0; i--) {
    const o = objects[i]!
    let lo = 0
    let hi = kept.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (kept[mid]!.start < o.start) lo = mid + 1
      else hi = mid
    }
    const before = kept[lo - 1]
    const after = kept[lo]
    if ((before !== undefined && before.end > o.start) || (after !== undefined && after.start < o.end)) continue
    kept.splice(lo, 0, o)
  }
  return kept.map((o) => o.line)
}

if (import.meta.main) {
  const path = process.argv[2]
  if (path === undefined) {
    process.stderr.write("usage: node bench/perfMap.ts /tmp/perf-<pid>.map\n")
    process.exit(2)
  }
  const text = readFileSync(path, "utf8")
  const lines = newestCodeObjects(text)
  writeFileSync(path, lines.join("\n") + "\n")
  process.stdout.write(`${path}: kept ${lines.length} of ${text.split("\n").filter((l) => l !== "").length} code objects\n`)
}
