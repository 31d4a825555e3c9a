/**
 * An organisation's Amazon Bedrock credential (BYOK): either an AWS access key pair (optionally with an STS session
 * token) and the region to call, used to sign each request with SigV4, or a Bedrock API key sent as a Bearer token.
 * The pair is stored as one encrypted BYOK secret (its JSON, below); never logged, never returned.
 */
export interface AwsCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  readonly region: string
}

export type BedrockCredential =
  | { readonly kind: "sigv4"; readonly aws: AwsCredentials }
  | { readonly kind: "api-key"; readonly apiKey: string }

/** The marker at the start of a stored key pair; a Bedrock API key never starts with "{". */
const KIND = "aws-sigv4"

export const serialiseAwsCredentials = (aws: AwsCredentials): string =>
  JSON.stringify({
    kind: KIND,
    access_key_id: aws.accessKeyId,
    secret_access_key: aws.secretAccessKey,
    ...(aws.sessionToken === undefined ? {} : { session_token: aws.sessionToken }),
    region: aws.region
  })

/** The stored secret read back: a key pair when it is one, else the string is a Bedrock API key. */
export const parseBedrockCredential = (stored: string): BedrockCredential => {
  if (stored.startsWith("{")) {
    try {
      const o = JSON.parse(stored) as Record<string, unknown>
      if (o.kind === KIND && typeof o.access_key_id === "string" && typeof o.secret_access_key === "string" && typeof o.region === "string") {
        return {
          kind: "sigv4",
          aws: {
            accessKeyId: o.access_key_id,
            secretAccessKey: o.secret_access_key,
            ...(typeof o.session_token === "string" ? { sessionToken: o.session_token } : {}),
            region: o.region
          }
        }
      }
    } catch {
      // not a key pair: treated as an API key below
    }
  }
  return { kind: "api-key", apiKey: stored }
}

/** AWS region names: `us-west-2`, `eu-central-1`, `ap-southeast-4`, `us-gov-west-1`. */
export const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/

/** Bedrock Runtime's regional origin (https://docs.aws.amazon.com/general/latest/gr/bedrock.html). */
export const bedrockRuntimeOrigin = (region: string): string => `https://bedrock-runtime.${region}.amazonaws.com`
