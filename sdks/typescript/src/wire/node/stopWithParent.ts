/**
 * npm runs a script as `sh -c "<script>"`, and `npx <bin>` runs the bin the same way. On SIGTERM or SIGINT npm signals
 * that shell, which dies without passing the signal on, so the program it started kept running and kept its port
 * (`kill <npm pid>`, `timeout`, a process manager: issue 32; `npx privacy-relay proxy`: issue 33). A program started
 * by npm (npm sets `npm_lifecycle_event`: the script's name, `npx` for npx) therefore watches the process that started
 * it and, once that process is gone, stops exactly as SIGTERM stops it (its own handler: drain, close, exit). Started
 * any other way (systemd, a container, a shell, a test) it does nothing: those parents signal it themselves.
 * Node-only; under the wire because both the gateway's programs (programs/) and the SDK's bin (src/cli.ts) use it, and
 * the wire is the one part of the SDK the gateway may import.
 */
export const stopWithParent = (env: Readonly<Record<string, string | undefined>> = process.env, intervalMs = 250): void => {
  if (env.npm_lifecycle_event === undefined) return
  const parent = process.ppid
  if (parent <= 1) return
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    process.kill(process.pid, "SIGTERM")
  }, intervalMs)
  // Never what keeps the program alive.
  timer.unref()
}
