/**
 * `~` in path settings, on Node and Deno: the rule of ../wire/config/homePath.ts (shared with the starter kit) with
 * Node's home directory and path join, its `~user` refusal as a ProxyStartError (what the SDK's clients and programs
 * throw).
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { expandHomePath as homePathRule, type HomePaths } from "../wire/config/homePath.ts"
import { ConfigInvalid } from "../wire/config/setting.ts"
import { ProxyStartError } from "./ProxyStartError.ts"

/** Node's home directory and path join, as the wire's rule takes them. */
export const NODE_HOME_PATHS: HomePaths = { homedir, join }

export const expandHomePath = (path: string, setting: string, env: Readonly<Record<string, string | undefined>> = process.env): string => {
  try {
    return homePathRule(path, setting, env, NODE_HOME_PATHS)
  } catch (error) {
    throw error instanceof ConfigInvalid ? new ProxyStartError(error.message) : error
  }
}
