/**
 * The server's gateway key (`svc_...`) comes from a file, never from the command line or the environment (both are
 * visible to other local users and end up in logs), and never appears in a message. A key file readable by the group
 * or others is refused: another account could have read it. The starter kit carries its own copy of this small rule
 * so that a fork depends on nothing but the published SDK's portable wire entry (the SDK's own reader is Node-only);
 * `~` in the path is the SDK's rule (`Settings.expandHomePath`).
 */
import { readFileSync, statSync } from "node:fs"
import { Settings } from "@privacy-relay/sdk/wire"
import { HOME_PATHS } from "./settings.ts"

const GATEWAY_KEY_PATTERN = /^svc_[a-z2-7]+$/

export class StarterConfigError extends Error {}

export const readGatewayKeyFile = (setting: string | undefined): string => {
  if (setting === undefined || setting === "") {
    throw new StarterConfigError("GATEWAY_KEY_FILE is not set: name a file (mode 0600) that holds the gateway key (svc_...).")
  }
  const path = Settings.expandHomePath(setting, "GATEWAY_KEY_FILE", process.env, HOME_PATHS)
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
