/**
 * `~` in the gateway's path settings: every `*_FILE` and `*_DIR` variable may start with `~` or `~/` for the home
 * directory of the account the gateway runs as (`$HOME`, else the account's home), as a shell would expand it.
 * Settings rarely pass through a shell (systemd `Environment=`, compose and Kubernetes env keep the `~`), so the
 * gateway expands it itself, once, before any setting is read. `~user/...` is refused: give the full path.
 * Relative paths are relative to the working directory the gateway was started in. (The client SDK has the same
 * rule in sdks/typescript/src/client/homePath.ts; the gateway does not import client code.)
 */
import { homedir } from "node:os"
import { join } from "node:path"

/** The variables that name a file or a directory. */
export const isPathSetting = (name: string): boolean => /_(FILE|DIR)$/.test(name)

/** `env` with `~` expanded in every path setting; `fail` is called with a message for `~user` forms. */
export const expandPathSettings = (
  env: Readonly<Record<string, string | undefined>>,
  fail: (message: string) => never
): Readonly<Record<string, string | undefined>> => {
  let out: Record<string, string | undefined> | undefined
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !value.startsWith("~") || !isPathSetting(name)) continue
    if (value !== "~" && !value.startsWith("~/") && !value.startsWith("~\\")) {
      fail(`${name} ${value}: only ~ or ~/ (the home directory) is expanded, not ~user; give the full path`)
    }
    const home = env.HOME || homedir()
    out ??= { ...env }
    out[name] = value === "~" ? home : join(home, value.slice(2))
  }
  return out ?? env
}
