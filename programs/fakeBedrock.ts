/**
 * The fake provider's Amazon Bedrock Runtime routes: `POST /model/{modelId}/converse` (JSON) and
 * `POST /model/{modelId}/converse-stream` (AWS event stream, `application/vnd.amazon.eventstream`), answering like
 * the rest of the fake (`Echo: <last user text>`, a call of the first tool when tools are offered, usage from the
 * body's bytes and the reply's words), in Converse's shapes
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html, API_runtime_ConverseStream).
 *
 * Every call must carry a valid SigV4 signature by a key the fake knows (`FAKE_BEDROCK_CREDENTIALS`, or a Bedrock API
 * key as Bearer token, `FAKE_BEDROCK_API_KEY`): the fake signs the request again with @smithy/signature-v4 from the
 * signed headers it received and compares, so a relay that signed wrongly, or a body changed after signing, is
 * refused with 403 as AWS would (InvalidSignatureException).
 */
import { createHash, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { bedrockSigner } from "../src/providers/bedrock/sigv4.ts"
import type { AwsCredentials } from "../src/providers/bedrock/credentials.ts"
import { encodeEvent } from "../src/relay/translate/converse/eventStreamReader.ts"

/** Test credentials the fake accepts (never real: the fake is a development tool). */
export const FAKE_BEDROCK_CREDENTIALS: ReadonlyArray<Omit<AwsCredentials, "region">> = [
  { accessKeyId: "AKIAFAKEBEDROCK00001", secretAccessKey: "fakeBedrockSecretKey/for+tests/only0000001" }
]
/** A Bedrock API key the fake accepts as `Authorization: Bearer`. */
export const FAKE_BEDROCK_API_KEY = "ABSKfakebedrockapikey0001"

/** `/model/{modelId}/converse` or `/converse-stream`, the model id percent-encoded once. */
const PATH = /^\/model\/([^/]+)\/(converse|converse-stream)$/

export const bedrockRouteOf = (path: string): { readonly modelId: string; readonly stream: boolean } | undefined => {
  const m = PATH.exec(path)
  if (m === null) return undefined
  let modelId: string
  try {
    modelId = decodeURIComponent(m[1]!)
  } catch {
    return undefined
  }
  return { modelId, stream: m[2] === "converse-stream" }
}

/** AWS error types by status, sent in `x-amzn-errortype` with a `{message}` body as Bedrock does. */
export const bedrockErrorType = (status: number): string =>
  status === 429 ? "ThrottlingException" : status === 503 ? "ServiceUnavailableException" : status === 403 ?
  "AccessDeniedException" : status === 404 ? "ResourceNotFoundException" : status === 408 ? "ModelTimeoutException" :
  status === 424 ? "ModelErrorException" : status >= 500 ? "InternalServerException" : "ValidationException"

export interface BedrockRefusal {
  readonly status: number
  readonly type: string
  readonly message: string
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/

/** `20261124T091500Z` -> Date */
const amzDate = (v: string | undefined): Date | undefined => {
  const m = v === undefined ? null : /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v)
  return m === null ? undefined : new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!))
}

const invalidSignature: BedrockRefusal = {
  status: 403,
  type: "InvalidSignatureException",
  message: "The request signature we calculated does not match the signature you provided."
}

/**
 * Checks a request's SigV4 signature by signing it again; undefined when it is valid. Also refused: an unknown key,
 * a signature older or newer than 5 minutes, and an `x-amz-content-sha256` that is not the body's hash (the signer
 * trusts that header as the payload hash, so it must be checked against the bytes).
 */
export const verifyBedrockSignature = async (
  req: IncomingMessage,
  path: string,
  body: Buffer,
  keys: ReadonlyArray<Omit<AwsCredentials, "region">> = FAKE_BEDROCK_CREDENTIALS,
  now = new Date()
): Promise<BedrockRefusal | undefined> => {
  const authorization = header(req, "authorization") ?? ""
  if (authorization === `Bearer ${FAKE_BEDROCK_API_KEY}`) return undefined
  const m = AUTH.exec(authorization)
  if (m === null) return { status: 403, type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" }
  const [, accessKeyId, day, region, service, signedList, signature] = m as unknown as [string, string, string, string, string, string, string]
  const key = keys.find((k) => k.accessKeyId === accessKeyId)
  if (key === undefined) return { status: 403, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." }
  const date = amzDate(header(req, "x-amz-date"))
  if (service !== "bedrock" || date === undefined || !(header(req, "x-amz-date") ?? "").startsWith(day)) return invalidSignature
  if (Math.abs(now.getTime() - date.getTime()) > 5 * 60_000) return { status: 403, type: "InvalidSignatureException", message: "Signature expired." }
  const contentHash = header(req, "x-amz-content-sha256")
  if (contentHash !== undefined && contentHash !== createHash("sha256").update(body).digest("hex")) return invalidSignature
  const signedNames = signedList.split(";")
  if (!signedNames.includes("host") || !signedNames.includes("x-amz-date")) return invalidSignature
  const headers: Record<string, string> = {}
  for (const name of signedNames) {
    const v = header(req, name)
    if (v === undefined) return invalidSignature
    headers[name] = v
  }
  const token = header(req, "x-amz-security-token")
  const [hostname, port] = (headers.host ?? "").split(":")
  const again = await bedrockSigner({ ...key, ...(token === undefined ? {} : { sessionToken: token }), region }).sign({
    method: req.method ?? "POST",
    protocol: "http:",
    hostname: hostname ?? "",
    ...(port === undefined ? {} : { port: Number(port) }),
    path,
    query: {},
    headers,
    body
  }, { signingDate: date })
  const expected = /Signature=([0-9a-f]{64})$/.exec(String(again.headers.authorization ?? again.headers.Authorization))?.[1] ?? ""
  const ok = expected.length === signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(signature))
  return ok ? undefined : invalidSignature
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const textOfBlocks = (content: unknown): string =>
  Array.isArray(content) ? content.filter((b) => isObject(b) && typeof b.text === "string").map((b) => (b as { text: string }).text).join("\n") : ""

/** What the fake answers a Converse request: like the other routes, read from Converse's message shapes. */
export const fakeConverseTurn = (body: Json, reply: (text: string) => string): { text: string } | { tool: string; args: string } => {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : []
  const last = messages[messages.length - 1]
  if (last !== undefined && last.role === "user" && Array.isArray(last.content)) {
    const results = last.content.filter((b) => isObject(b) && isObject(b.toolResult)).map((b) => textOfBlocks(((b as Json).toolResult as Json).content))
    if (results.length > 0) return { text: reply(results.join("\n")) }
  }
  let lastUser = ""
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") {
      lastUser = textOfBlocks(messages[i]!.content)
      break
    }
  }
  const tools = isObject(body.toolConfig) && Array.isArray(body.toolConfig.tools) ? body.toolConfig.tools : []
  const first = tools[0]
  const name = isObject(first) && isObject(first.toolSpec) && typeof first.toolSpec.name === "string" ? first.toolSpec.name : undefined
  if (name !== undefined) return { tool: name, args: JSON.stringify({ text: lastUser }) }
  return { text: reply(lastUser) }
}

/** Real Bedrock pads event payloads with a `p` field of varying length (so sizes do not reveal content). */
const padded = (payload: Json, seq: number): Json => ({ ...payload, p: "abcdefghijklmnopqrstuvwxyz".slice(0, 1 + (seq % 26)) })

/** A whole Converse answer. */
export const converseAnswer = (turn: { text: string } | { tool: string; args: string }, seq: number, inputTokens: number, outputTokens: number): Json => ({
  output: {
    message: {
      role: "assistant",
      content: ["text" in turn ? { text: turn.text } : { toolUse: { toolUseId: `tooluse_fake_${seq}`, name: turn.tool, input: JSON.parse(turn.args) } }]
    }
  },
  stopReason: "text" in turn ? "end_turn" : "tool_use",
  usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
  metrics: { latencyMs: 1 }
})

/** The event-stream frames of a ConverseStream answer, in Bedrock's order (metadata after messageStop). */
export const converseStreamFrames = (
  turn: { text: string } | { tool: string; args: string },
  seq: number,
  inputTokens: number,
  outputTokens: number,
  pieces: (text: string) => string[]
): Array<Uint8Array> => {
  const frames: Array<Uint8Array> = []
  let n = 0
  const push = (type: string, payload: Json) => frames.push(encodeEvent(type, padded(payload, n++)))
  push("messageStart", { role: "assistant" })
  if ("text" in turn) {
    for (const w of pieces(turn.text)) push("contentBlockDelta", { contentBlockIndex: 0, delta: { text: w } })
  } else {
    push("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: `tooluse_fake_${seq}`, name: turn.tool } } })
    for (const w of pieces(turn.args)) push("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: w } } })
  }
  push("contentBlockStop", { contentBlockIndex: 0 })
  push("messageStop", { stopReason: "text" in turn ? "end_turn" : "tool_use" })
  push("metadata", { usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }, metrics: { latencyMs: 1 } })
  return frames
}

/** A frame whose message CRC no longer matches (one payload byte flipped). */
export const corruptFrame = (frame: Uint8Array): Uint8Array => {
  const copy = Uint8Array.from(frame)
  copy[copy.length - 6] = copy[copy.length - 6]! ^ 0xff
  return copy
}
