/** @privacy-relay/sdk in browsers: the same API as index.ts, with the browser platform. */
import { browserPlatform } from "./platform.browser.ts"
import { RelayClientCore, type RelayClientOptions } from "./RelayClient.ts"

export class RelayClient extends RelayClientCore {
  constructor(options: RelayClientOptions) {
    super(options, browserPlatform)
  }
}

export type { CallOptions, RelayClientOptions, RelayMeta, RelayStream, WithMeta } from "./RelayClient.ts"
export type { NameModelSetting } from "./engine.ts"
export { Conversation } from "./conversation.ts"
export * from "./errors.ts"
export * from "./files/index.ts"
/** What an alias looks like (`<EMAIL_1_kgzt>`): to find or highlight them in tokenised text (use with a global match). */
export { ALIAS_PATTERN } from "./tokeniser/alias.ts"
export { createRestClient } from "./restClient.ts"
export type { RestClientOptions } from "./restClient.ts"
export type { ByokCredential, PortalSession, RestApi, RestOptions } from "./rest.ts"
export type { GatewayOk, GatewayOperations, GatewayPaths, GatewayResponse, GatewaySchemas } from "./api.ts"
export * from "./verify/index.ts"
