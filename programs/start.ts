/**
 * `npm start`: the gateway with embedded storage (DATA_DIR, default ./.data) plus the fake provider as the
 * built-in `local` provider, so a newcomer's first call works offline. For production run programs/gateway.ts.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { gatewayLayer } from "../layers/GatewayLive.ts"
import { startFakeProvider } from "./fake-provider.ts"
import { stopWithParent } from "./stopWithParent.ts"

// `kill <npm pid>` reaches npm's shell only: stop with it (stopWithParent.ts).
stopWithParent()

const provider = await startFakeProvider({
  host: "127.0.0.1",
  port: Number(process.env.FAKE_PROVIDER_PORT ?? 8788)
})
process.stdout.write(JSON.stringify({ level: "info", msg: "fake provider listening (built-in local provider)", url: provider.url }) + "\n")

// Development defaults: top-ups confirmed by the dev route (never in production: see docs/billing.md).
const env = { LOCAL_PROVIDER_URL: provider.url, PAYMENTS_PROVIDER: "dev", ...process.env }
NodeRuntime.runMain(
  Layer.launch(gatewayLayer(env, undefined, { shutdown: "drain" })).pipe(Effect.ensuring(Effect.promise(() => provider.close())))
)
