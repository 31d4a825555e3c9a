/**
 * BENCH_PROFILE=1: the gateway runs with `--cpu-prof`, and at the end its profile is reduced to where the CPU went
 * (self time per function and per source file or package), so a missed target names its cost. The raw
 * `.cpuprofile` stays next to the results for Chrome DevTools / speedscope.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface ProfileSummary {
  readonly file: string
  readonly totalMs: number
  readonly topFunctions: ReadonlyArray<{ name: string; where: string; selfMs: number; pct: number }>
  readonly topSources: ReadonlyArray<{ source: string; selfMs: number; pct: number }>
}

/** `node_modules/<pkg>` (scoped too) or the repository-relative file; `(native)` for V8 / GC / idle. */
const sourceOf = (url: string, root: string): string => {
  if (url === "") return "(native: V8, GC, program, idle)"
  const path = url.startsWith("file://") ? decodeURIComponent(url.slice(7)) : url
  const nm = path.lastIndexOf("/node_modules/")
  if (nm >= 0) {
    const parts = path.slice(nm + 14).split("/")
    return `npm:${parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`
  }
  return path.startsWith(root) ? path.slice(root.length + 1) : path
}

/** Every profile in `dir`, oldest first (`--cpu-prof` writes one per thread: a worker thread's too). */
export const profileFiles = (dir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort()
  } catch {
    return []
  }
}

export const summariseProfile = (dir: string, root: string, top = 20, only?: string): ProfileSummary | undefined => {
  const file = only ?? profileFiles(dir).at(-1)
  if (file === undefined) return undefined
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const fn = new Map<string, { name: string; where: string; us: number }>()
  const src = new Map<string, number>()
  let total = 0
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame
    if (frame.functionName === "(idle)") continue
    total += us
    const source = sourceOf(frame.url, root)
    const where = frame.url === "" ? source : `${source}:${frame.lineNumber + 1}`
    const key = `${frame.functionName}@${where}`
    const entry = fn.get(key) ?? { name: frame.functionName || "(anonymous)", where, us: 0 }
    entry.us += us
    fn.set(key, entry)
    src.set(source, (src.get(source) ?? 0) + us)
  }
  const pct = (us: number) => (100 * us) / Math.max(1, total)
  return {
    file: join(dir, file),
    totalMs: total / 1000,
    topFunctions: [...fn.values()].sort((a, b) => b.us - a.us).slice(0, top).map((e) => ({ name: e.name, where: e.where, selfMs: e.us / 1000, pct: pct(e.us) })),
    topSources: [...src.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([source, us]) => ({ source, selfMs: us / 1000, pct: pct(us) }))
  }
}

export const profileMarkdown = (p: ProfileSummary, title = "Gateway CPU profile"): string => {
  const lines = [
    "",
    `## ${title} (whole run, self time, idle excluded)`,
    "",
    `${p.totalMs.toFixed(0)} ms of CPU sampled; raw profile: \`${p.file}\``,
    "",
    "| source | self ms | % |",
    "|---|---|---|",
    ...p.topSources.map((s) => `| ${s.source} | ${s.selfMs.toFixed(0)} | ${s.pct.toFixed(1)} |`),
    "",
    "| function | where | self ms | % |",
    "|---|---|---|---|",
    ...p.topFunctions.map((f) => `| ${f.name.replaceAll("|", "\\|")} | ${f.where} | ${f.selfMs.toFixed(0)} | ${f.pct.toFixed(1)} |`)
  ]
  return lines.join("\n") + "\n"
}
