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

/** An upstream answer that cannot be read as its format: nothing of it reaches the client. */
export class MalformedUpstream extends Error {}
