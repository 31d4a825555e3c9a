/**
 * The gateway program: `node programs/gateway.ts`. Every setting comes from the environment (docs/configuration.md);
 * secrets only from files named there, never from the command line.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { gatewayLayer } from "../layers/GatewayLive.ts"

NodeRuntime.runMain(Layer.launch(gatewayLayer(process.env)))
