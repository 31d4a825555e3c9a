// Runs a program as `node --import test/support/listenProbe.mjs <args>` until it exits, for the tests that prove a bad
// setting stops a program before it starts anything (test/bench/badSettings.test.ts, test/programs/clientBadSettings
// .test.ts). The probe writes every `listen` and every child process the program asks for to a file of its own, read
// back as `started`: an empty list is "nothing started" observed, not inferred.
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "../..")
/** The preload itself: plain JavaScript, so it loads before any TypeScript of the program. */
export const START_PROBE = join(ROOT, "test/support/listenProbe.mjs")

/** How a probed program ended. */
export interface StartProbeRun {
  readonly code: number | null
  readonly stderrLines: ReadonlyArray<string>
  readonly stdout: string
  /** Every `listen` (`listen <port> <host>`) and child process (`spawn <file>`) the program asked for, in order. */
  readonly started: ReadonlyArray<string>
}

/** A program that starts despite the bad value would serve (or benchmark) for minutes: it is stopped after this. */
const STOP_AFTER_MS = 60_000

let runs = 0
/**
 * Runs `node --import <probe> <args>` from the repository's root, with `env` and nothing of this process's
 * environment but PATH (HOME is `dir`, so nothing of the real home is read or written), stdin closed at once (the MCP
 * server's stdio transport and the demo read it), until it exits. The probe's file goes in `dir`.
 */
export const runWithStartProbe = (args: ReadonlyArray<string>, env: Record<string, string>, dir: string): Promise<StartProbeRun> => {
  const probeFile = join(dir, `started-${process.pid}-${++runs}.log`)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", START_PROBE, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: dir, LISTEN_PROBE_FILE: probeFile, ...env },
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: a program that starts despite the bad value is stopped with everything it started.
      detached: true
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.stdin!.end()
    // Stopped so that the test fails on its assertions (something started), not on its own timeout.
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), STOP_AFTER_MS)
    child.on("error", reject)
    child.on("exit", (code) => {
      clearTimeout(timer)
      const started = existsSync(probeFile) ? readFileSync(probeFile, "utf8").split("\n").filter(Boolean) : []
      resolve({ code, stdout, stderrLines: stderr.split("\n").filter((line) => line !== ""), started })
    })
  })
}
