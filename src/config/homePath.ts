/**
 * `~` in the gateway's path settings: every `*_FILE` and `*_DIR` variable may start with `~` or `~/` for the home
 * directory of the account the gateway runs as (`$HOME`, else the account's home), as a shell would expand it.
 * Settings rarely pass through a shell (systemd `Environment=`, compose and Kubernetes env keep the `~`), so the
 * gateway expands it itself, once, before any setting is read. `~user/...` is refused: give the full path.
 * Relative paths are relative to the working directory the gateway was started in. The rule is the one the client
 * programs and the starter kit use (sdks/typescript/src/wire/config/homePath.ts, in the wire the gateway may import).
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { expandHomePath } from "../../sdks/typescript/src/wire/config/homePath.ts"

/** The variables that name a file or a directory. */
export const isPathSetting = (name: string): boolean => /_(FILE|DIR)$/.test(name)

/** `env` with `~` expanded in every path setting; a `~user` form is a ConfigInvalid naming its variable. */
export const expandPathSettings = (env: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string | undefined>> => {
  let out: Record<string, string | undefined> | undefined
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !value.startsWith("~") || !isPathSetting(name)) continue
    out ??= { ...env }
    out[name] = expandHomePath(value, name, env, { homedir, join })
  }
  return out ?? env
}
