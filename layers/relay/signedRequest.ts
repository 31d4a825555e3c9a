import { Effect } from "effect"
import type { RouteTarget } from "../../services/ProviderRouter.ts"
import type { PreparedRequest } from "./preparedRequest.ts"

/**
 * The headers of one upstream attempt with its signature added (Amazon Bedrock with an AWS key pair: SigV4 over the
 * URL, content-type, accept and the exact body sent). Signed per attempt, right before sending, so a fallback or a
 * retry never reuses a signature. A signer that fails (it never should: no I/O, only hashing) is a defect.
 */
export const signedHeaders = (sign: NonNullable<RouteTarget["sign"]>, prepared: PreparedRequest, headers: Record<string, string>) =>
  Effect.promise(() => sign({ url: prepared.url, headers, body: prepared.body })).pipe(
    Effect.map((signature) => ({ ...headers, ...signature })),
    Effect.withSpan("relay.upstream.sign")
  )

/** AWS names an error's type in `x-amzn-errortype` (`ThrottlingException:http://internal...`); its name only. */
export const awsErrorType = (header: string | ReadonlyArray<string> | undefined): string | undefined => {
  const v = Array.isArray(header) ? header[0] : header
  const name = typeof v === "string" ? v.split(":", 1)[0] : undefined
  return name !== undefined && /^[A-Za-z]{1,64}$/.test(name) ? name : undefined
}
