import { execFileSync } from "node:child_process"

/** The commit a bench measured (`<short sha>`, `+dirty` when tracked files differ from it), for its results file. */
export const gitCommit = (root: string): string => {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).trim() !== ""
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return "unknown"
  }
}
