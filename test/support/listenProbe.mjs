// Preloaded into a child program (`node --import test/support/listenProbe.mjs ...`): appends one line to the file named
// by LISTEN_PROBE_FILE for every `listen` of a net server (HTTP servers included), before it happens, so a test can
// tell "nothing listened" from "listened and stopped". Plain JavaScript: it loads before any TypeScript.
import { appendFileSync } from "node:fs"
import { Server } from "node:net"

const file = process.env.LISTEN_PROBE_FILE
if (file) {
  const listen = Server.prototype.listen
  Server.prototype.listen = function (...args) {
    const [first, second] = args
    const port = typeof first === "object" && first !== null ? first.port : first
    const host = typeof first === "object" && first !== null ? first.host : typeof second === "string" ? second : ""
    appendFileSync(file, `listen ${port} ${host}\n`)
    return listen.apply(this, args)
  }
}
