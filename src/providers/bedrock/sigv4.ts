/**
 * SigV4 signing of one Bedrock Runtime request with @smithy/signature-v4 (the AWS SDK's own signer) over
 * node:crypto SHA-256. The headers it returns (authorization, x-amz-date, x-amz-content-sha256 and, with
 * temporary credentials, x-amz-security-token) go on the request next to the headers that were signed; any
 * header added after signing travels unsigned. Service name `bedrock`, scope `<date>/<region>/bedrock/aws4_request`
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html).
 */
import { Hash } from "@smithy/core/serde"
import { SignatureV4 } from "@smithy/signature-v4"
import type { AwsCredentials } from "./credentials.ts"

export const BEDROCK_SIGNING_SERVICE = "bedrock"

/** node:crypto SHA-256 (and HMAC-SHA-256 with a secret), in the shape the signer constructs. */
export class Sha256 extends Hash {
  constructor(secret?: Parameters<typeof Hash.prototype.update>[0]) {
    super("sha256", secret)
  }
}

export const bedrockSigner = (aws: AwsCredentials): SignatureV4 =>
  new SignatureV4({
    credentials: {
      accessKeyId: aws.accessKeyId,
      secretAccessKey: aws.secretAccessKey,
      ...(aws.sessionToken === undefined ? {} : { sessionToken: aws.sessionToken })
    },
    region: aws.region,
    service: BEDROCK_SIGNING_SERVICE,
    sha256: Sha256
  })

/**
 * The headers to add to a POST of `body` to `url` carrying `signedHeaders` (lower-case names; `host` is taken from
 * the URL, as the HTTP client sends it). The path is signed as sent (already percent-encoded once: the signer
 * encodes it again, as SigV4 asks of every service but S3).
 */
export const signBedrockRequest = async (input: {
  readonly url: string
  readonly signedHeaders: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly credentials: AwsCredentials
  readonly now?: Date
}): Promise<Record<string, string>> => {
  const url = new URL(input.url)
  const signed = await bedrockSigner(input.credentials).sign({
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port === "" ? {} : { port: Number(url.port) }),
    path: url.pathname,
    query: {},
    headers: { ...input.signedHeaders, host: url.host },
    body: input.body
  }, input.now === undefined ? {} : { signingDate: input.now })
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(signed.headers)) {
    const lower = name.toLowerCase()
    if (lower === "host" || lower in input.signedHeaders) continue
    out[lower] = value
  }
  return out
}

/** The headers of an upstream call that SigV4 covers; the rest (request id, trace context) travel unsigned. */
const SIGNED = ["content-type", "accept"] as const

/**
 * A request signer bound to one credential, for the relay: given the URL, the headers about to be sent and the body,
 * the headers to add. Signing happens per attempt, right before sending (a signature is valid for 5 minutes).
 */
export const bedrockRequestSigner = (aws: AwsCredentials) =>
(request: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array }) => {
  const signedHeaders: Record<string, string> = {}
  for (const name of SIGNED) {
    const v = request.headers[name]
    if (v !== undefined) signedHeaders[name] = v
  }
  return signBedrockRequest({ url: request.url, signedHeaders, body: request.body, credentials: aws })
}
