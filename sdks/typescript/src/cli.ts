/** The `privacy-relay` command. */
const [command] = process.argv.slice(2)
const HELP = `privacy-relay <command>

  demo      chat with the relay from this terminal with an anonymous demo key ($2, 24 h, no receipts)
  --help    this text
`
if (command === undefined || command === "--help" || command === "help") {
  process.stdout.write(HELP)
} else {
  process.stderr.write(`privacy-relay: unknown command ${JSON.stringify(command)}\n\n${HELP}`)
  process.exitCode = 2
}
