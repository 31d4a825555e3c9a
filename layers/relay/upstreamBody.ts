/** Reading an upstream provider's body: an answer into memory (bounded), an error as its status and type only. */
import { ApiError } from "../../src/http/ApiError.ts"
import type { RouteTarget } from "../../services/ProviderRouter.ts"
import { awsErrorType } from "./signedRequest.ts"
import type { UpstreamResponse } from "./UpstreamClient.ts"

/** Largest upstream body (error or non-streamed answer) the gateway reads into memory. */
const MAX_UPSTREAM_BODY = 32 * 1024 * 1024

export const readAll = async (body: AsyncIterable<Uint8Array>) => {
  const parts: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > MAX_UPSTREAM_BODY) throw new Error("upstream body too large")
    parts.push(chunk)
  }
  return Buffer.concat(parts)
}

/** A provider error, reported without its body (which may quote credentials); status and type only. */
export const upstreamError = async (target: RouteTarget, res: UpstreamResponse) => {
  let providerType: string | undefined
  try {
    const json = JSON.parse((await readAll(res.body)).toString("utf8"))
    // OpenAI/Anthropic: error.type (or code); Gemini: error.status (its code is the HTTP status number); AWS: a header.
    const t = json?.error?.type ?? json?.error?.status ?? json?.error?.code ?? json?.type ?? awsErrorType(res.headers["x-amzn-errortype"])
    if (typeof t === "string" && t.length <= 64) providerType = t
  } catch {
    // an unreadable error body is still an upstream error
  }
  const retryAfter = res.headers["retry-after"]
  return new ApiError({
    status: 502,
    code: "upstream_error",
    message: `The upstream provider "${target.provider.slug}" answered ${res.status}.`,
    extra: { provider: target.provider.slug, provider_status: res.status, provider_error_type: providerType ?? null },
    headers: typeof retryAfter === "string" ? { "retry-after": retryAfter } : undefined
  })
}
