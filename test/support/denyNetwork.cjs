// Preloaded with `node --require` into a program under test, where it also runs in every worker thread: each attempt
// to open a connection (TCP, a Unix socket, a DNS lookup; fetch and http go through these) is appended to the file
// DENY_NETWORK_LOG and fails. A test then proves that the program worked without the network, not merely that no
// request happened to be seen.
const dns = require("node:dns")
const { appendFileSync } = require("node:fs")
const net = require("node:net")
const { isMainThread } = require("node:worker_threads")

const record = (what) => {
  if (process.env.DENY_NETWORK_LOG) appendFileSync(process.env.DENY_NETWORK_LOG, `${isMainThread ? "main" : "worker"} ${what}\n`)
}

const describe = (target) => {
  try {
    return typeof target === "object" && target !== null ? JSON.stringify({ host: target.host, port: target.port, path: target.path }) : JSON.stringify(target)
  } catch {
    return "?"
  }
}

net.Socket.prototype.connect = function deniedConnect(...args) {
  record(`connect ${describe(Array.isArray(args[0]) ? args[0][0] : args[0])}`)
  throw new Error("Network access is denied in this test (test/support/denyNetwork.cjs).")
}

dns.lookup = function deniedLookup(host, ...rest) {
  record(`dns ${host}`)
  const callback = rest.find((a) => typeof a === "function")
  const error = Object.assign(new Error(`DNS lookup of ${host} is denied in this test.`), { code: "ENOTFOUND" })
  if (callback) process.nextTick(callback, error)
}
