/** The `privacy-relay` command. */
import { DEMO_HELP, runDemo } from "./demo.ts"

const HELP = `privacy-relay <command>

  demo                    chat with the relay from this terminal with an anonymous demo key ($2, 24 h, no receipts)
  transparency monitor    check that the gateway's receipt transparency log only grows (fork and rollback detection)
  --help                  this text

${DEMO_HELP}`

const [command, ...rest] = process.argv.slice(2)
if (command === undefined || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(HELP)
} else if (command === "demo") {
  process.exitCode = await runDemo(rest, process.env, { input: process.stdin, output: process.stdout, errors: process.stderr })
} else if (command === "transparency") {
  const { runTransparency } = await import("./transparencyMonitor.ts")
  process.exitCode = await runTransparency(rest, process.env, { output: process.stdout, errors: process.stderr })
} else {
  process.stderr.write(`privacy-relay: unknown command ${JSON.stringify(command)}\n\n${HELP}`)
  process.exitCode = 2
}
