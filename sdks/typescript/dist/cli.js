#!/usr/bin/env node
// src/cli.ts
var [command] = process.argv.slice(2);
var HELP = `privacy-relay <command>

  demo      chat with the relay from this terminal with an anonymous demo key ($2, 24 h, no receipts)
  --help    this text
`;
if (command === void 0 || command === "--help" || command === "help") {
  process.stdout.write(HELP);
} else {
  process.stderr.write(`privacy-relay: unknown command ${JSON.stringify(command)}

${HELP}`);
  process.exitCode = 2;
}
//# sourceMappingURL=cli.js.map
