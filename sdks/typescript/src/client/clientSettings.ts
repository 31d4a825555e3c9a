/**
 * Settings the client programs share (the local proxy, the MCP server, the demo), as `Setting`s of the one settings
 * machinery (../wire/config/setting.ts): each names its variable and what it allows, and a bad value is a
 * `ConfigInvalid` whose message is the one line the program prints before it stops. Node-only (home directories).
 * Each program's schema is in its own folder: proxy/proxyConfig.ts, mcp/settings.ts, demo.ts.
 */
import { homePathSetting as wireHomePathSetting } from "../wire/config/homePath.ts"
import { ConfigInvalid, custom, type Setting } from "../wire/config/setting.ts"
import { clientConfigDir } from "./deviceKey.ts"
import { NODE_HOME_PATHS } from "./homePath.ts"
import { ProxyStartError } from "./ProxyStartError.ts"

/** The name model a program tokenises names with (NAME_MODEL). */
export type NameModelSetting =
  | { readonly kind: "builtin" }
  | { readonly kind: "compromise" }
  | { readonly kind: "off" }
  | { readonly kind: "http"; readonly url: string }

/** A client check that throws ProxyStartError (the config folder's `~user` paths) as a setting error, message unchanged. */
const asInvalid = <A>(check: () => A): A => {
  try {
    return check()
  } catch (error) {
    if (error instanceof ProxyStartError) throw new ConfigInvalid(error.message)
    throw error
  }
}

/** GATEWAY_URL (optional, and required for the local proxy): the one rule, in ../wire/config/gatewayUrl.ts. */
export { gatewayUrlSetting, requiredGatewayUrlSetting } from "../wire/config/gatewayUrl.ts"

/** NAME_MODEL: `builtin` (default), `compromise` (the built-in model plus the compromise library), `off`, or an http(s) URL of a name-model endpoint. */
export const nameModelSetting: Setting<NameModelSetting> = custom(
  "NAME_MODEL",
  "builtin, compromise, off, or an http(s) URL of a name-model endpoint",
  "builtin",
  (raw, fail) => {
    const value = raw?.trim() ?? ""
    if (value === "" || value === "builtin") return { kind: "builtin" }
    if (value === "off") return { kind: "off" }
    if (value === "compromise") return { kind: "compromise" }
    if (/^https?:\/\/\S+$/i.test(value)) {
      try {
        return { kind: "http", url: new URL(value).toString() }
      } catch {
        // refused below
      }
    }
    return fail(value)
  }
)

/** A NAME_MODEL as the SDK's `nameModel` option takes it (`builtin`, `compromise`, `off` or the URL). */
export const nameModelOption = (setting: NameModelSetting): string => (setting.kind === "http" ? setting.url : setting.kind)

/** A file path: `~/` is the home directory (settings rarely pass through a shell), `~user` is refused. Blank is unset. */
export const homePathSetting = (name: string, fallback = "unset"): Setting<string | undefined> => wireHomePathSetting(name, NODE_HOME_PATHS, fallback)

/**
 * Where the device attester key, the alias secret and the MCP server's receipts live: PRIVACY_RELAY_CONFIG_DIR, else
 * $XDG_CONFIG_HOME/privacy-relay, else ~/.config/privacy-relay (client/deviceKey.ts reads it the same way).
 */
export const configDirSetting: Setting<string> = {
  name: "PRIVACY_RELAY_CONFIG_DIR",
  alsoReads: ["XDG_CONFIG_HOME"],
  allowed: "a directory (absolute, relative, or starting with ~/)",
  fallback: "$XDG_CONFIG_HOME/privacy-relay or ~/.config/privacy-relay",
  read: (env) => asInvalid(() => clientConfigDir(env))
}
