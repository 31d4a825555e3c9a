/**
 * `~` in path settings, the rule every client program shares (the local proxy, the MCP server, the demo, the SDK's
 * clients and the starter kit's server). Paths are taken as given (absolute, or relative to the working directory),
 * except that a leading `~` or `~/` names the user's home directory (`$HOME`, else the account's home), as a shell
 * would expand it: settings rarely pass through a shell (JSON configs, an MCP host's `env`, systemd `Environment=`,
 * `docker run -e` and the SDK's own `apiKeyFile` keep the `~`). `~user/...` (another account's home) is refused with
 * a message saying so, not read as a directory named `~user`.
 *
 * Portable like the rest of the wire: the caller hands in Node's `os.homedir` and `path.join` (`HomePaths`), so the
 * rule has one copy and `@privacy-relay/sdk/wire` still imports no `node:` module.
 */
import { ConfigInvalid, type Env, nonEmpty, type Setting } from "./setting.ts"

/** What the rule needs of the platform: on Node, `{ homedir }` of node:os and `{ join }` of node:path. */
export interface HomePaths {
  readonly homedir: () => string
  readonly join: (...paths: Array<string>) => string
}

/** `path` with a leading `~` or `~/` as the home directory; throws `ConfigInvalid` naming `setting` for `~user`. */
export const expandHomePath = (path: string, setting: string, env: Env, paths: HomePaths): string => {
  if (path !== "~" && !path.startsWith("~/") && !path.startsWith("~\\")) {
    if (path.startsWith("~")) {
      throw new ConfigInvalid(`${setting} ${path}: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.`)
    }
    return path
  }
  const home = env.HOME || paths.homedir()
  return path === "~" ? home : paths.join(home, path.slice(2))
}

/** A file path setting: `~/` is the home directory, `~user` is refused. Blank or unset is undefined. */
export const homePathSetting = (name: string, paths: HomePaths, fallback = "unset"): Setting<string | undefined> => ({
  name,
  allowed: "a file path (absolute, relative, or starting with ~/)",
  fallback,
  read: (env: Env) => {
    const raw = nonEmpty(env[name])
    return raw === undefined ? undefined : expandHomePath(raw, name, env, paths)
  }
})
