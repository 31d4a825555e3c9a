import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const NGINX = "/usr/sbin/nginx"
const DEPLOY = join(import.meta.dirname, "../../deploy/nginx")

/** `text` with `from` replaced by `to`; throws when `from` does not occur exactly once (the shipped file changed). */
const replaceOnce = (text: string, from: string, to: string) => {
  const count = text.split(from).length - 1
  if (count !== 1) throw new Error(`expected exactly one ${JSON.stringify(from)} in the shipped nginx files, found ${count}`)
  return text.replace(from, to)
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/**
 * The shipped deploy/nginx files in a temporary prefix: nginx.conf as shipped except its include directory, pid
 * and logs; privacy-relay.conf as shipped except its listen line (a free loopback port); upstream.conf as shipped
 * except the compose host names, replaced by the given gateway addresses (one or two, "127.0.0.1:port").
 */
export const stageNginx = (listenPort: number, gatewayAddresses: ReadonlyArray<string>) => {
  if (gatewayAddresses.length < 1 || gatewayAddresses.length > 2) throw new Error("one or two gateway addresses")
  const prefix = mkdtempSync(join(tmpdir(), "pr-nginx-"))
  mkdirSync(join(prefix, "logs"))
  mkdirSync(join(prefix, "conf"))
  let main = readFileSync(join(DEPLOY, "nginx.conf"), "utf8")
  // The shipped file sets no pid file (the system default): this instance gets its own, as docs/deployment.md says.
  if (/^\s*pid\s/m.test(main)) throw new Error("the shipped nginx.conf sets a pid file: two instances on one host would clash")
  main = replaceOnce(main, "access_log /dev/stdout relay;", `access_log ${prefix}/logs/access.log relay;`)
  main = replaceOnce(main, "error_log /dev/stderr warn;", `error_log ${prefix}/logs/error.log warn;`)
  main = main.replaceAll("/etc/nginx/privacy-relay/", `${prefix}/conf/`)
  // Temporary files (large request bodies) inside the prefix, which this user can write.
  main = replaceOnce(main, "http {", `http {\n    client_body_temp_path ${prefix}/body;\n    proxy_temp_path ${prefix}/proxy;\n    fastcgi_temp_path ${prefix}/fastcgi;\n    uwsgi_temp_path ${prefix}/uwsgi;\n    scgi_temp_path ${prefix}/scgi;`)
  let upstream = readFileSync(join(DEPLOY, "upstream.conf"), "utf8")
  upstream = replaceOnce(upstream, "gateway-1:8080", gatewayAddresses[0]!)
  upstream = gatewayAddresses[1] === undefined
    ? replaceOnce(upstream, "    server gateway-2:8080 max_fails=2 fail_timeout=10s;\n", "")
    : replaceOnce(upstream, "gateway-2:8080", gatewayAddresses[1])
  const server = replaceOnce(readFileSync(join(DEPLOY, "privacy-relay.conf"), "utf8"), "listen 8080;", `listen 127.0.0.1:${listenPort};`)
  writeFileSync(join(prefix, "conf/upstream.conf"), upstream)
  writeFileSync(join(prefix, "conf/privacy-relay.conf"), server)
  writeFileSync(join(prefix, "nginx.conf"), main)
  // Run as root (CI), nginx would switch its workers to `nobody`, who cannot use this private prefix.
  const globals = `pid ${prefix}/nginx.pid;${process.getuid?.() === 0 ? " user root;" : ""}`
  // nginx reads one -g (the last one given): every global directive goes in it.
  const args = (more = "") => ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-g", `${globals}${more}`]
  return { prefix, args: args(), daemonOffArgs: args(" daemon off;") }
}

export interface NginxProxy {
  readonly url: string
  readonly staged: ReturnType<typeof stageNginx>
  /** `nginx -t` on the staged files. */
  readonly check: () => { status: number | null; stderr: string }
  /** nginx's access log so far (one line per request: status, upstream address and status). */
  readonly accessLog: () => string
  /** nginx's error log so far (upstream failures: refused connections, resets). */
  readonly errorLog: () => string
  readonly stop: () => Promise<void>
}

/** Debian's nginx with the shipped configuration on a free loopback port, in front of `gatewayAddresses`. */
export const startNginx = async (gatewayAddresses: ReadonlyArray<string>): Promise<NginxProxy> => {
  if (!existsSync(NGINX)) throw new Error("Debian's nginx is not installed (.ci/run installs it)")
  const port = await freePort()
  const staged = stageNginx(port, gatewayAddresses)
  const url = `http://127.0.0.1:${port}`
  const child: ChildProcess = spawn(NGINX, staged.daemonOffArgs, { stdio: ["ignore", "ignore", "pipe"] })
  const read = (file: string) => existsSync(join(staged.prefix, file)) ? readFileSync(join(staged.prefix, file), "utf8") : ""
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
    rmSync(staged.prefix, { recursive: true, force: true })
  }
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${url}/nginx-healthz`).then((r) => r.ok, () => false)
    if (up) {
      return {
        url,
        staged,
        check: () => {
          const run = spawnSync(NGINX, [...staged.args, "-t"], { encoding: "utf8" })
          return { status: run.status, stderr: run.stderr }
        },
        accessLog: () => read("logs/access.log"),
        errorLog: () => read("logs/error.log"),
        stop
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const log = read("logs/error.log")
  await stop()
  throw new Error(`nginx did not start: ${log}`)
}
