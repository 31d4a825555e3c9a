/**
 * A peer for `npm run bench:peers` (issue 41 item 4): Portkey's open-source AI gateway, installed from the npm
 * registry into a temporary folder (never into the project), started headless on 127.0.0.1 and pointed at the same
 * fake provider, so the user path's cost can be read against a real alternative measured in the same run.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, type ServerProcess, startNodeProcess, waitForHealthy } from "./processes.ts"

/** The version measured in issue 41's table; BENCH_PORTKEY_VERSION picks another. */
export const PORTKEY_VERSION = "1.15.2"
const PACKAGE = "@portkey-ai/gateway"

export interface PortkeyTarget {
  readonly process: ServerProcess
  readonly url: string
  readonly version: string
  /** The headers that make Portkey relay an OpenAI chat call to `upstreamUrl` (its `custom_host` route). */
  readonly headers: Readonly<Record<string, string>>
  readonly cleanup: () => void
}

export const startPortkeyTarget = async (input: {
  readonly upstreamUrl: string
  readonly env: Record<string, string | undefined>
  readonly version?: string
  readonly log: (msg: string) => void
}): Promise<PortkeyTarget> => {
  const version = input.version ?? PORTKEY_VERSION
  const dir = mkdtempSync(join(tmpdir(), "relay-bench-portkey-"))
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  try {
    input.log(`installing ${PACKAGE}@${version} from the npm registry into ${dir}`)
    // --ignore-scripts: the bench runs the package's server, not its install hooks.
    const installed = spawnSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", `${PACKAGE}@${version}`], {
      encoding: "utf8",
      env: input.env as NodeJS.ProcessEnv,
      timeout: 300_000
    })
    if (installed.status !== 0) throw new Error(`npm install ${PACKAGE}@${version} failed (${installed.status ?? installed.signal}):\n${installed.stderr.slice(-2_000)}`)
    const script = join(dir, "node_modules", PACKAGE, "build", "start-server.js")
    const port = await freePort()
    const preload = join(dirname(fileURLToPath(import.meta.url)), "listenOnLoopback.ts")
    const proc = startNodeProcess(`portkey ${version}`, script, input.env, ["--import", preload], [`--port=${port}`, "--headless"])
    const url = `http://127.0.0.1:${port}`
    await waitForHealthy(proc, `${url}/`, 60_000)
    return {
      process: proc,
      url,
      version,
      headers: {
        "content-type": "application/json",
        authorization: "Bearer unused",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": `${input.upstreamUrl}/v1`
      },
      cleanup
    }
  } catch (err) {
    cleanup()
    throw err
  }
}
