/**
 * `~` in path settings. Node and Deno only. Paths in settings are taken as given (absolute, or relative to the
 * working directory the program was started in), except that a leading `~` or `~/` names the user's home directory
 * (`$HOME`, else the account's home), as a shell would expand it. Settings rarely pass through a shell: JSON configs
 * (PROXY_CONFIG, an MCP host's `env`), systemd `Environment=`, `docker run -e` and the SDK's own `apiKeyFile` all keep
 * the `~` literally. `~user/...` (another account's home) is refused with a message saying so, not read as a
 * directory named `~user`.
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { ProxyStartError } from "./ProxyStartError.ts"

export const expandHomePath = (path: string, setting: string, env: Readonly<Record<string, string | undefined>> = process.env): string => {
  if (path !== "~" && !path.startsWith("~/") && !path.startsWith("~\\")) {
    if (path.startsWith("~")) {
      throw new ProxyStartError(`${setting} ${path}: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.`)
    }
    return path
  }
  const home = env.HOME || homedir()
  return path === "~" ? home : join(home, path.slice(2))
}
