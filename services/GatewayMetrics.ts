import { Context, Layer } from "effect"
import { RequestMetrics } from "../src/metrics/RequestMetrics.ts"

/** Request counters and latency histogram, one per services layer (one per gateway process), served at GET /metrics. */
export class GatewayMetrics extends Context.Service<GatewayMetrics, RequestMetrics>()("privacy-relay/GatewayMetrics") {
  static readonly layer = Layer.sync(GatewayMetrics, () => new RequestMetrics())
}
