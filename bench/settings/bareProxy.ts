/** The settings of the bare Node hop (bench/bare-proxy.ts), the benchmark's yardstick. */
import { custom, nonEmpty, port } from "../../sdks/typescript/src/wire/config/setting.ts"

export const BARE_PROXY_SETTINGS = {
  upstreamUrl: custom("BARE_UPSTREAM_URL", "an http:// or https:// origin to forward to", "unset (required)", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return fail()
    try {
      return ["http:", "https:"].includes(new URL(value).protocol) ? value : fail()
    } catch {
      return fail()
    }
  }),
  port: port("PORT", 0)
}
