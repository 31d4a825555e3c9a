import { Context, Layer } from "effect"
import { type GatewayConfig, parseGatewayConfig } from "../src/config/gatewayConfig.ts"

export { ConfigInvalid, type GatewayConfig, parseGatewayConfig } from "../src/config/gatewayConfig.ts"

export class AppConfig extends Context.Service<AppConfig, GatewayConfig>()("privacy-relay/AppConfig") {
  static readonly fromEnv = (env: Readonly<Record<string, string | undefined>>) =>
    Layer.succeed(AppConfig, parseGatewayConfig(env))
}
