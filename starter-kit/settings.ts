/**
 * The starter kit server's settings, read whole at start-up through the SDK's settings machinery (`Settings` of
 * `@privacy-relay/sdk/wire`, the one the gateway, the local proxy and the MCP server read theirs with): a bad value
 * stops the server before it listens, with one line naming the variable and what it allows, instead of becoming a
 * NaN port or a silent default. docs/configuration.md's "Starter kit" section is tested against this schema.
 *
 * A fork of the starter kit takes the machinery from the published SDK; inside this repository the root's
 * `npm run starter` resolves the same import to the SDK's source (the `privacy-relay-repo` export condition).
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { Settings } from "@privacy-relay/sdk/wire"

/** Node's home directory and path join, for the SDK's `~` rule (`~/` is the home directory, `~user` is refused). */
export const HOME_PATHS: Settings.HomePaths = { homedir, join }

/** Where `npm run starter` builds the app and the server serves it from, unless STARTER_APP_DIR names another folder. */
export const DEFAULT_APP_DIR = join(import.meta.dirname, "dist")

/** A path: `~/` is the home directory, `~user` is refused (the SDK's rule); blank or unset is `fallback`. */
const pathSetting = <F extends string | undefined>(name: string, fallbackInWords: string, fallback: F): Settings.Setting<string | F> => {
  const path = Settings.homePathSetting(name, HOME_PATHS, fallbackInWords)
  return { ...path, read: (env) => path.read(env) ?? fallback }
}

/** A comma-separated list of host names (no scheme, path or port); blank is unset. */
const HOST_NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/i

export const STARTER_SETTINGS = {
  /** https, or plain http to a loopback address for development; no credentials, query or fragment (the SDK's rule). */
  gatewayUrl: Settings.requiredGatewayUrlSetting,
  /** Read (mode, content) when the server starts: gatewayKeyFile.ts says why a key never comes from the environment. */
  keyFile: pathSetting("GATEWAY_KEY_FILE", "required", undefined),
  host: Settings.custom("STARTER_HOST", "an IP address or host name to listen on", "127.0.0.1", (raw, fail) => {
    const value = Settings.nonEmpty(raw) ?? "127.0.0.1"
    return HOST_NAME.test(value) || /^[0-9a-f:]+$/i.test(value) ? value : fail(raw)
  }),
  port: Settings.port("STARTER_PORT", 5173),
  appDir: pathSetting("STARTER_APP_DIR", "starter-kit/dist", DEFAULT_APP_DIR),
  allowedHosts: Settings.custom(
    "STARTER_ALLOWED_HOSTS",
    "a comma-separated list of host names (no scheme, port or path)",
    "on loopback: localhost,127.0.0.1,[::1]",
    (raw, fail) => {
      const value = Settings.nonEmpty(raw)
      if (value === undefined) return undefined
      const names = value.split(",").map((name) => name.trim()).filter((name) => name !== "")
      return names.length > 0 && names.every((name) => HOST_NAME.test(name)) ? names : fail(raw)
    }
  )
} satisfies Settings.Schema

export type StarterSettings = Settings.SettingsOf<typeof STARTER_SETTINGS>

/** Every starter kit setting from `env`; throws `Settings.ConfigInvalid` (one line) on the first bad value. */
export const readStarterSettings = (env: Settings.Env): StarterSettings => Settings.readSettings(STARTER_SETTINGS, env)
