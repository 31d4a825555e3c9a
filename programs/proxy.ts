/**
 * The local proxy: `node programs/proxy.ts` (npm run proxy). Point any OpenAI or Anthropic client at
 * http://127.0.0.1:8799/v1; personal data is tokenised on this device and only tokens reach the gateway.
 * Settings come from the environment or a PROXY_CONFIG file (docs/proxy.md), never from the command
 * line: the gateway key is read from GATEWAY_KEY_FILE.
 */
import { consoleLog } from "../sdks/typescript/src/proxy/proxyLog.ts"
import { ProxyStartError, type ProxyStartFailure } from "../sdks/typescript/src/client/ProxyStartError.ts"
import { stopWithParent } from "./stopWithParent.ts"

/**
 * One FATAL JSON log line on stderr, as the gateway writes its start-up failures: a one-line message that
 * says what to fix (never a stack) and a stable reason. Then exit 1.
 */
const fail = (message: string, reason: ProxyStartFailure | "unexpected"): never => {
  consoleLog("FATAL", `privacy-relay proxy: ${message}`, { event: "startup_failed", reason })
  process.exit(1)
}

if (process.argv.length > 2) {
  fail(
    "the proxy takes no command-line arguments (secrets must never be on the command line); configure it with PROXY_HOST, PROXY_PORT, GATEWAY_URL, GATEWAY_KEY_FILE, NAME_MODEL or a PROXY_CONFIG file.",
    "invalid_setting"
  )
}

try {
  // Loaded after the argument check so a misuse fails at once, before the engine's libraries load.
  const { startProxy } = await import("../sdks/typescript/src/proxy/startProxy.ts")
  const proxy = await startProxy(process.env)
  consoleLog(
    "INFO",
    `privacy-relay proxy listening on ${proxy.url} (gateway ${proxy.gatewayUrl}, name model ${proxy.nameModel.kind})`,
    { event: "listening", url: proxy.url, gateway: proxy.gatewayUrl, name_model: proxy.nameModel.kind }
  )
  const stop = () => void proxy.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  stopWithParent()
} catch (error) {
  if (error instanceof ProxyStartError) fail(error.message, error.reason)
  else fail(`failed to start: ${(error as Error).message}`, "unexpected")
}
