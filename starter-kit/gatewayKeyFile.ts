/**
 * The server's gateway key (`svc_...`) comes from a file, never from the command line or the environment (both are
 * visible to other local users and end up in logs), and never appears in a message. A key file readable by the group
 * or others is refused: another account could have read it. The starter kit carries its own copy of this small rule
 * so that a fork depends on nothing but the published SDK.
 */
import { readFileSync, statSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

const GATEWAY_KEY_PATTERN = /^svc_[a-z2-7]+$/

export class StarterConfigError extends Error {}

/**
 * A path setting as given (absolute, or relative to the working directory), with a leading `~` or `~/` as the home
 * directory: settings from a process manager or a JSON file never pass through a shell that would expand it.
 */
export const expandHomePath = (path: string, setting: string): string => {
  if (path !== "~" && !path.startsWith("~/") && !path.startsWith("~\\")) {
    if (path.startsWith("~")) throw new StarterConfigError(`${setting} ${path}: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.`)
    return path
  }
  const home = process.env.HOME || homedir()
  return path === "~" ? home : join(home, path.slice(2))
}

export const readGatewayKeyFile = (setting: string | undefined): string => {
  if (setting === undefined || setting === "") {
    throw new StarterConfigError("GATEWAY_KEY_FILE is not set: name a file (mode 0600) that holds the gateway key (svc_...).")
  }
  const path = expandHomePath(setting, "GATEWAY_KEY_FILE")
  let mode: number
  try {
    const stats = statSync(path)
    if (!stats.isFile()) throw new StarterConfigError(`Gateway key file ${path} is not a regular file.`)
    mode = stats.mode
  } catch (error) {
    if (error instanceof StarterConfigError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") throw new StarterConfigError(`Gateway key file ${path} does not exist (set by GATEWAY_KEY_FILE).`)
    throw new StarterConfigError(`Gateway key file ${path} cannot be read: ${code ?? String(error)}.`)
  }
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new StarterConfigError(`Gateway key file ${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); refusing to use it. Fix: chmod 600 ${path}`)
  }
  const key = readFileSync(path, "utf8").trim()
  if (!GATEWAY_KEY_PATTERN.test(key)) throw new StarterConfigError(`Gateway key file ${path} does not hold a gateway key (one line starting with svc_).`)
  return key
}
