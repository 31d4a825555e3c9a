/**
 * Reads the gateway key (`svc_...`) from the file named by GATEWAY_KEY_FILE. Node-only. The key never
 * comes from the command line (argv is visible to every local user in the process list) and never
 * appears in an error message.
 */
import { readFileSync } from "node:fs"
import { expandHomePath } from "./homePath.ts"
import { ProxyStartError } from "./ProxyStartError.ts"
import { assertPrivateFile } from "./secretFile.ts"

const GATEWAY_KEY_PATTERN = /^svc_[a-z2-7]+$/

export const readGatewayKeyFile = (setting: string | undefined): string => {
  if (setting === undefined || setting === "") {
    throw new ProxyStartError(
      "GATEWAY_KEY_FILE is not set: name a file (mode 0600) that holds your gateway key (svc_...). The key is never read from the command line."
    )
  }
  // Absolute, relative to the working directory, or under `~/` (expanded here: JSON configs and SDK options keep it).
  const path = expandHomePath(setting, "GATEWAY_KEY_FILE")
  assertPrivateFile(path, "Gateway key file", "GATEWAY_KEY_FILE")
  const key = readFileSync(path, "utf8").trim()
  if (!GATEWAY_KEY_PATTERN.test(key)) {
    throw new ProxyStartError(`Gateway key file ${path} does not hold a gateway key (expected one line starting with svc_).`)
  }
  return key
}
