/**
 * The `privacy-relay` command of the package (`npx privacy-relay <command>` once installed, `npx -y
 * @privacy-relay/sdk <command>` without installing). Each command loads only its own code.
 */
import { DEMO_HELP } from "./demo.ts"
import { stopWithParent } from "./wire/node/stopWithParent.ts"

const HELP = `privacy-relay <command>

  proxy                   the local proxy: point any OpenAI or Anthropic client at http://127.0.0.1:8799/v1
                          (settings from the environment or a PROXY_CONFIG file, never the command line)
  mcp                     the MCP server: stdio for MCP hosts, or MCP_TRANSPORT=http for Streamable HTTP
  demo                    chat with the relay from this terminal with an anonymous demo key ($2, 24 h, no receipts)
  transparency monitor    check that the gateway's receipt transparency log only grows (fork and rollback detection)
  --help                  this text

The proxy and the MCP server read GATEWAY_URL and GATEWAY_KEY_FILE (a file, mode 0600, holding your gateway key).

${DEMO_HELP}`

const [command, ...rest] = process.argv.slice(2)
if (command === undefined || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(HELP)
} else if (command === "proxy") {
  const { runProxy } = await import("./proxy/runProxy.ts")
  // `npx privacy-relay proxy` stopped with SIGTERM to npx: the signal ends npx's shell, not this process.
  await runProxy(rest, process.env, { afterStart: stopWithParent })
} else if (command === "mcp") {
  const { runMcp } = await import("./mcp/runMcp.ts")
  await runMcp(process.env, { afterStart: stopWithParent })
} else if (command === "demo") {
  const { runDemo } = await import("./demo.ts")
  process.exitCode = await runDemo(rest, process.env, { input: process.stdin, output: process.stdout, errors: process.stderr })
} else if (command === "transparency") {
  const { runTransparency } = await import("./transparencyMonitor.ts")
  process.exitCode = await runTransparency(rest, process.env, { output: process.stdout, errors: process.stderr })
} else {
  process.stderr.write(`privacy-relay: unknown command ${JSON.stringify(command)}\n\n${HELP}`)
  process.exitCode = 2
}
