/** The settings of the stand-in gateway (bench/lib/stubGateway.ts) the proxy benches start. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"

export const STUB_GATEWAY_SETTINGS = {
  /** Answer relay calls after this long, like a real gateway's time per call (the proxy then idles between calls). */
  delayMs: numberIn("STUB_GATEWAY_DELAY_MS", { fallback: 0, min: 0, max: 60_000, unit: "milliseconds" })
}
