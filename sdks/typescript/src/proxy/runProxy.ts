/**
 * The local proxy as a program: `privacy-relay proxy` (the package's command) and `node programs/proxy.ts` (the
 * repository's entry point) both run this. Settings come from the environment or a PROXY_CONFIG file
 * (docs/proxy.md), never from the command line: the gateway key is read from GATEWAY_KEY_FILE.
 */
import { ProxyStartError, type ProxyStartFailure } from "../client/ProxyStartError.ts"
import type { ProgramHooks } from "../programHooks.ts"
import { consoleLog } from "./proxyLog.ts"

/**
 * One FATAL JSON log line on stderr, as the gateway writes its start-up failures: a one-line message that
 * says what to fix (never a stack) and a stable reason. Then exit 1.
 */
const fail = (message: string, reason: ProxyStartFailure | "unexpected"): never => {
  consoleLog("FATAL", `privacy-relay proxy: ${message}`, { event: "startup_failed", reason })
  process.exit(1)
}

export const runProxy = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>, hooks: ProgramHooks = {}): Promise<void> => {
  if (args.length > 0) {
    fail(
      "the proxy takes no command-line arguments (secrets must never be on the command line); configure it with PROXY_HOST, PROXY_PORT, GATEWAY_URL, GATEWAY_KEY_FILE, NAME_MODEL or a PROXY_CONFIG file.",
      "invalid_setting"
    )
  }
  try {
    // Loaded after the argument check so a misuse fails at once, before the engine's libraries load.
    const { startProxy } = await import("./startProxy.ts")
    const proxy = await startProxy(env)
    consoleLog(
      "INFO",
      `privacy-relay proxy listening on ${proxy.url} (gateway ${proxy.gatewayUrl}, name model ${proxy.nameModel.kind})`,
      { event: "listening", url: proxy.url, gateway: proxy.gatewayUrl, name_model: proxy.nameModel.kind }
    )
    const stop = () => void proxy.close().then(() => process.exit(0))
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
    hooks.afterStart?.()
  } catch (error) {
    if (error instanceof ProxyStartError) fail(error.message, error.reason)
    else fail(`failed to start: ${(error as Error).message}`, "unexpected")
  }
}
