// Preloaded into a child program (`node --import test/support/listenProbe.mjs ...`): appends one line to the file named
// by LISTEN_PROBE_FILE for every `listen` of a net server (HTTP servers included) and every child process it starts
// (`spawn <file>`: spawn, execFile, exec and fork all go through ChildProcess.prototype.spawn), before it happens, so a
// test can tell "nothing started" from "started and stopped". Plain JavaScript: it loads before any TypeScript.
import { appendFileSync } from "node:fs"
import { ChildProcess } from "node:child_process"
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
  const spawn = ChildProcess.prototype.spawn
  ChildProcess.prototype.spawn = function (options) {
    appendFileSync(file, `spawn ${options?.file ?? ""}\n`)
    return spawn.call(this, options)
  }
}
