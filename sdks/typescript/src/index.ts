/**
 * @privacy-relay/sdk for Node and Deno: the RelayClient with on-device tokenisation, the REST capability set, offline
 * receipt and webhook verification. Browsers import the same names from the package's browser build.
 */
import { nodePlatform } from "./platform.node.ts"
import { RelayClientCore, type RelayClientOptions } from "./RelayClient.ts"

export class RelayClient extends RelayClientCore {
  constructor(options: RelayClientOptions) {
    super(options, nodePlatform)
  }
}

export type { CallOptions, RelayClientOptions, RelayMeta, RelayStream, WithMeta } from "./RelayClient.ts"
export type { NameModelSetting } from "./engine.ts"
export { Conversation } from "./conversation.ts"
export * from "./errors.ts"
export * from "./files/index.ts"
/**
 * The image redactor for `mediaPolicy: "redact"` (Node only, not in the browser build): on-device OCR paints over the
 * identifiers an image shows. Needs the optional peers tesseract.js and @tesseract.js-data/eng installed beside the SDK.
 */
export { createImageRedactor, REDACT_MAX_BYTES, REDACT_MAX_PIXELS, REDACT_OCR_TIMEOUT_MS } from "./ocr/redactImage.ts"
export type { ImageRedactorOptions, NodeImageRedactor } from "./ocr/redactImage.ts"
export type { ImageRedactor, MediaPolicy } from "./tokeniser/tokeniseRequest.ts"
/** What an alias looks like (`<EMAIL_1_kgzt>`): to find or highlight them in tokenised text (use with a global match). */
export { ALIAS_PATTERN } from "./tokeniser/alias.ts"
export { createRestClient } from "./restClient.ts"
export type { RestClientOptions } from "./restClient.ts"
export type { ByokCredential, PortalSession, RestApi, RestOptions } from "./rest.ts"
export type { GatewayOk, GatewayOperations, GatewayPaths, GatewayResponse, GatewaySchemas } from "./api.ts"
export * from "./verify/index.ts"
