import { ApiError } from "../../http/ApiError.ts"

/**
 * A request field the other wire format cannot express. The call is refused before anything is forwarded rather
 * than relayed with the field silently dropped (the caller would get a different answer than it asked for).
 */
export class UntranslatableField extends Error {
  readonly path: string
  readonly reason: string
  constructor(path: string, reason: string) {
    super(reason)
    this.path = path
    this.reason = reason
  }
}

export const untranslatable = (path: string, reason: string): never => {
  throw new UntranslatableField(path, reason)
}

/** The 400 the caller sees: the field, why, and the provider's format; never any of the field's content. */
export const untranslatableError = (e: UntranslatableField, providerSlug: string, upstreamWire: string) =>
  new ApiError({
    status: 400,
    code: "invalid_request",
    message: `${e.reason} (the model's provider "${providerSlug}" speaks the ${upstreamWire} format, so this request is translated).`,
    extra: { details: { path: e.path } }
  })

/**
 * A Responses request naming one of OpenAI's hosted tools (or sending back a hosted tool's call) for a provider that
 * does not run them: refused before anything is forwarded, never relayed with the tool dropped.
 */
export class UnsupportedTool extends Error {
  readonly path: string
  readonly toolType: string
  constructor(path: string, toolType: string) {
    super(`hosted tool ${toolType}`)
    this.path = path
    this.toolType = toolType
  }
}

/** The 400 the caller sees: the tool's type (a name from OpenAI's API, never content) and where it is. */
export const unsupportedToolError = (e: UnsupportedTool, providerSlug: string) =>
  new ApiError({
    status: 400,
    code: "tool_not_supported",
    message: `"${e.toolType.slice(0, 64)}" is a hosted tool that the model's provider "${providerSlug}" does not run through this gateway; nothing was sent. Use a function tool, or a model whose provider runs OpenAI's hosted tools (docs/relay.md).`,
    extra: { details: { path: e.path } }
  })

/** An upstream answer that cannot be read as its format: nothing of it reaches the client. */
export class MalformedUpstream extends Error {}
