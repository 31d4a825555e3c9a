/**
 * Rules for files that hold secrets on the user's machine (the gateway key, the device attester key).
 * Node-only. A secret file readable by the group or by others is refused rather than used: another
 * local account could read it, and silently tightening it would hide that it was ever exposed.
 */
import { statSync } from "node:fs"
import { ProxyStartError } from "./ProxyStartError.ts"

/** Throws a ProxyStartError when `path` is missing, not a regular file, or group/world-readable. */
export const assertPrivateFile = (path: string, what: string, settingName: string): void => {
  let mode: number
  try {
    const stats = statSync(path)
    if (!stats.isFile()) throw new ProxyStartError(`${what} ${path} is not a regular file (set by ${settingName}).`)
    mode = stats.mode
  } catch (error) {
    if (error instanceof ProxyStartError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") throw new ProxyStartError(`${what} ${path} does not exist (set by ${settingName}).`)
    throw new ProxyStartError(`${what} ${path} cannot be read: ${code ?? String(error)} (set by ${settingName}).`)
  }
  // Windows has no POSIX permission bits worth checking; everywhere else group/other bits must be clear.
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(3, "0")
    throw new ProxyStartError(
      `${what} ${path} is readable by other users (mode ${octal}); refusing to use it. Fix: chmod 600 ${path}`
    )
  }
}
