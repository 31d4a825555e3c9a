/**
 * The gateway program: `node programs/gateway.ts`. Every setting comes from the environment (docs/configuration.md);
 * secrets only from files named there, never from the command line. Everything it prints is a JSON log line, a
 * failed start-up included: one FATAL line saying why in words (port in use, database unreachable, ...), exit 1.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Logger, Runtime } from "effect"
import { gatewayLayer } from "../layers/GatewayLive.ts"
import { describeStartupFailure, ensurePortFree } from "../layers/StartupFailure.ts"
import { type GatewayConfig, parseGatewayConfig } from "../services/AppConfig.ts"
import { stopWithParent } from "../sdks/typescript/src/wire/node/stopWithParent.ts"

// `npm run gateway` stopped by a signal to npm stops this too (sdks/typescript/src/wire/node/stopWithParent.ts).
stopWithParent()

let settings: GatewayConfig | undefined

const program = Effect.gen(function*() {
  settings = parseGatewayConfig(process.env)
  yield* ensurePortFree(settings.host, settings.port)
  return yield* Layer.launch(gatewayLayer(process.env, undefined, { shutdown: "drain" }))
}).pipe(
  Effect.tapCause((cause) => {
    // SIGINT/SIGTERM end a running gateway by interruption: that is a shutdown, not a failure.
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    const failure = describeStartupFailure(cause, settings)
    return Effect.logFatal(failure.message).pipe(Effect.annotateLogs({ event: "startup_failed", reason: failure.reason }))
  }),
  Effect.provide(Logger.layer([Logger.consoleJson]))
)

// A stop by signal that drained and flushed everything is a clean exit (0), not Effect's 130: systemd and
// orchestrators then record a normal stop.
NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
})
