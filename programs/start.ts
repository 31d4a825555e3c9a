/**
 * `npm start`: the gateway with embedded storage (DATA_DIR, default ./.data) plus the fake provider as the
 * built-in `local` provider, so a newcomer's first call works offline. For production run programs/gateway.ts.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { gatewayLayer } from "../layers/GatewayLive.ts"
import { parseGatewayConfig } from "../src/config/gatewayConfig.ts"
import { FAKE_PROVIDER_SETTINGS } from "../src/config/gatewaySettings.ts"
import { ConfigInvalid, readSettings } from "../sdks/typescript/src/wire/config/setting.ts"
import { startFakeProvider } from "./fake-provider.ts"
import { stopWithParent } from "../sdks/typescript/src/wire/node/stopWithParent.ts"

// `kill <npm pid>` reaches npm's shell only: stop with it (sdks/typescript/src/wire/node/stopWithParent.ts).
stopWithParent()

// Every setting is checked before anything starts: a bad one is one line on stderr and exit status 1.
let settings: { readonly fakeProviderPort: number }
try {
  parseGatewayConfig(process.env)
  settings = { fakeProviderPort: readSettings(FAKE_PROVIDER_SETTINGS, { FAKE_PROVIDER_PORT: process.env.FAKE_PROVIDER_PORT }).port ?? 8788 }
} catch (e) {
  if (!(e instanceof ConfigInvalid)) throw e
  process.stderr.write(JSON.stringify({ level: "fatal", msg: `invalid setting: ${e.message}` }) + "\n")
  process.exit(1)
}

const provider = await startFakeProvider({ host: "127.0.0.1", port: settings.fakeProviderPort })
process.stdout.write(JSON.stringify({ level: "info", msg: "fake provider listening (built-in local provider)", url: provider.url }) + "\n")

// Development defaults: top-ups confirmed by the dev route (never in production: see docs/billing.md).
const env = { LOCAL_PROVIDER_URL: provider.url, PAYMENTS_PROVIDER: "dev", ...process.env }
NodeRuntime.runMain(
  Layer.launch(gatewayLayer(env, undefined, { shutdown: "drain" })).pipe(Effect.ensuring(Effect.promise(() => provider.close())))
)
