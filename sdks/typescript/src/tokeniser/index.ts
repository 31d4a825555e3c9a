/**
 * Client-side tokenisation engine: detect personal data, replace it with per-request aliases, and
 * restore the originals in responses. Pure TypeScript (WebCrypto, no node: imports): Node, Deno, browsers.
 * The gateway must never import this module.
 */
export { ALIAS_PATTERN } from "./alias.ts"
export { builtinNameModel, loadBuiltinNameModel } from "./builtinNameModel.ts"
export { compromiseNameModel, loadCompromiseNameModel } from "./compromiseNameModel.ts"
export { detectStructured, PRIORITY, resolveOverlaps, structuredDetectors } from "./detectStructured.ts"
export type { StructuredOptions } from "./detectStructured.ts"
export type { Detector } from "./detectors/Detector.ts"
export { detokenise } from "./detokenise.ts"
export { httpNameModel } from "./httpNameModel.ts"
export { idempotentAliasSecret } from "./idempotentAliasSecret.ts"
export type { HttpNameModelOptions } from "./httpNameModel.ts"
export { NameModelUnavailable } from "./NameModel.ts"
export type { NameModel } from "./NameModel.ts"
export { createSession } from "./session.ts"
export type { SessionOptions, TokeniserSession } from "./session.ts"
export { createStreamingDetokeniser } from "./streamingDetokeniser.ts"
export type { StreamingDetokeniser } from "./streamingDetokeniser.ts"
export { endUserAlias, InvalidRequestBody, tokeniseRequest } from "./tokeniseRequest.ts"
export { EgressRefusal, walkEgress } from "../wire/egressPolicy.ts"
export type { MediaKind } from "../wire/egressPolicy.ts"
export type { ImageRedactor, MediaPolicy, PassthroughEntry, Route, TokenisedRequest, TokeniseRequestOptions } from "./tokeniseRequest.ts"
export { detectSpans, tokeniseText } from "./tokeniseText.ts"
export { ENTITY_TYPES } from "./types.ts"
export type { AliasMap, EntityType, Span, StructuredType } from "./types.ts"
