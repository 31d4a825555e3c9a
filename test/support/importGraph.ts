import { existsSync, readFileSync } from "node:fs"
import { dirname, relative, resolve, sep } from "node:path"

/** The repository's root. */
export const REPO_ROOT = resolve(import.meta.dirname, "../..")

const SPECIFIER_PATTERNS = [
  /\b(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g
]

/** The module specifiers a source file imports: static `import`/`export ... from`, side-effect `import "..."`, dynamic `import("...")`. */
export const importSpecifiers = (source: string): Array<string> =>
  SPECIFIER_PATTERNS.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!))

/** Repository-relative paths (with `/`) of every file reachable from `entry` through relative imports. */
export const reachableFiles = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const pending = [resolve(REPO_ROOT, entry)]
  while (pending.length > 0) {
    const file = pending.pop()!
    const key = relative(REPO_ROOT, file).split(sep).join("/")
    if (seen.has(key)) continue
    seen.add(key)
    if (!file.endsWith(".ts") || !existsSync(file)) continue
    for (const specifier of importSpecifiers(readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier))
    }
  }
  return seen
}
