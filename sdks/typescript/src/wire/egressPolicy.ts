/**
 * The egress policy (sdks/vectors/egress-policy.json; grammar in sdks/vectors/README.md "Egress policy"): every field
 * and content-part type of each client route classified as user text, an end-user identifier, structure, media or
 * refused. One walk serves both sides of the trust boundary: the client tokenises the places it returns and refuses
 * the rest before anything leaves the device; the gateway runs the same walk over field names, JSON types and
 * discriminators only (it never reads the text it returns) and refuses a body that strays from the policy without
 * the attestation declaring it. Anything the policy does not name is refused: a field a provider adds next month is
 * never sent in the clear by default.
 */
import policyData from "../../../vectors/egress-policy.json" with { type: "json" }

export type EgressRoute = "chat.completions" | "messages" | "messages.count_tokens" | "embeddings" | "responses"

export type MediaKind = "image" | "audio" | "file" | "document"

type Leaf = "pass" | "tokenise" | "tokenise-stable" | "refuse"
type PolicyNode =
  | Leaf
  | { readonly object: Readonly<Record<string, PolicyNode>>; readonly other?: PolicyNode }
  | { readonly array: PolicyNode }
  | { readonly byType: Readonly<Partial<Record<JsonType, PolicyNode>>> }
  | { readonly tagged: string; readonly variants: Readonly<Record<string, PolicyNode>>; readonly absent?: string }
  | { readonly ref: string }
  | { readonly jsonText: "tokenise" }
  | { readonly media: MediaKind }

type JsonType = "string" | "number" | "boolean" | "array" | "object"

interface EgressPolicy {
  readonly version: number
  readonly routes: Readonly<Record<EgressRoute, PolicyNode>>
  readonly definitions: Readonly<Record<string, PolicyNode>>
}

export const EGRESS_POLICY = policyData as unknown as EgressPolicy

/** Objects and arrays a body may nest, counted from the body itself (sdks/vectors/README.md "Nesting"). */
export const MAX_EGRESS_DEPTH = 64

/** A holder and key: a place in the (copied) body whose value the client may rewrite. */
export interface EgressPlace {
  readonly holder: Record<string, unknown> | Array<unknown>
  readonly key: string | number
  /** JSON pointer of the place. */
  readonly path: string
}

/** What one walk found: the places to tokenise, the media, and what passthrough patterns let through. */
export interface EgressWalk {
  /**
   * String leaves of user text, in document order; `json` marks a string holding JSON whose strings are the user text
   * (tool-call arguments).
   */
  readonly texts: Array<EgressPlace & { readonly json?: true }>
  /** String leaves of end-user identifiers (device-stable aliases), in document order. */
  readonly identifiers: Array<EgressPlace>
  /** Media values (the whole part or source object), for the client's media policy. */
  readonly media: Array<EgressPlace & { readonly kind: MediaKind }>
  /** Members or variants refused or unknown that a passthrough pattern let through (sent untokenised, declared). */
  readonly passthrough: Array<{ readonly path: string; readonly kind: "field" }>
}

export type EgressRefusalCode = "unsupported_field" | "unsupported_content" | "nesting_too_deep"

/** The HTTP status a client answers each refusal with (the local proxy; the SDKs' errors carry it too). */
export const egressRefusalStatus = (code: EgressRefusalCode): 400 | 415 => (code === "unsupported_content" ? 415 : 400)

/** The setting that would let a refused value through, named in the error's details. */
export const egressRefusalSetting = (code: EgressRefusalCode): string | undefined =>
  code === "unsupported_field" ? "PASSTHROUGH_PATHS" : code === "unsupported_content" ? "MEDIA_POLICY" : undefined

/**
 * The body strays from the policy at `path` (or holds media the client will not send): nothing may be sent. Messages
 * name paths, JSON types and part types, never values.
 */
export class EgressRefusal extends Error {
  readonly _tag = "EgressRefusal"
  readonly code: EgressRefusalCode
  readonly path: string
  readonly kind: MediaKind | undefined
  constructor(code: EgressRefusalCode, path: string, message: string, kind?: MediaKind) {
    super(message)
    this.name = "EgressRefusal"
    this.code = code
    this.path = path
    this.kind = kind
  }

  /** `details` of the error answer: the path, the media kind, the setting that allows it. */
  get details(): Record<string, string> {
    const setting = egressRefusalSetting(this.code)
    return { path: this.path, ...(this.kind === undefined ? {} : { kind: this.kind }), ...(setting === undefined ? {} : { setting }) }
  }
}

const escapeSegment = (segment: string | number) => String(segment).replaceAll("~", "~0").replaceAll("/", "~1")
const child = (path: string, segment: string | number) => `${path}/${escapeSegment(segment)}`

const jsonTypeOf = (value: unknown): JsonType | "null" => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  const t = typeof value
  return t === "string" || t === "number" || t === "boolean" ? t : "object"
}

const isRecord = (value: unknown): value is Record<string, unknown> => jsonTypeOf(value) === "object"

/** A compiled passthrough pattern: pointer segments, `*` matching any one. */
const compilePatterns = (patterns: ReadonlyArray<string>): Array<ReadonlyArray<string>> =>
  patterns.map((p) => (p === "" ? [] : p.split("/").slice(1)))

const matches = (patterns: Array<ReadonlyArray<string>>, path: string): boolean => {
  if (patterns.length === 0) return false
  const segments = path === "" ? [] : path.split("/").slice(1)
  return patterns.some((p) => p.length === segments.length && p.every((s, i) => s === "*" || s === segments[i]))
}

/** A container met by checkEgressDepth: its path is spelled out only for the refusal (issue 41: most bodies have none). */
interface DepthFrame {
  readonly value: object
  readonly depth: number
  readonly parent: DepthFrame | undefined
  readonly key: string | number
}

const pathOfFrame = (frame: DepthFrame): string => {
  const segments: Array<string | number> = []
  for (let at: DepthFrame | undefined = frame; at?.parent !== undefined; at = at.parent) segments.push(at.key)
  return segments.reverse().reduce<string>((path, segment) => child(path, segment), "")
}

/** Checks that the body nests at most MAX_EGRESS_DEPTH levels, without recursion (a hostile body cannot blow the stack). */
export const checkEgressDepth = (body: unknown): void => {
  if (typeof body !== "object" || body === null) return
  // Only containers are pushed: a string or number member needs no frame.
  const stack: Array<DepthFrame> = [{ value: body, depth: 1, parent: undefined, key: "" }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.depth > MAX_EGRESS_DEPTH) {
      const path = pathOfFrame(frame)
      throw new EgressRefusal("nesting_too_deep", path, `The request nests deeper than ${MAX_EGRESS_DEPTH} levels at ${path}; nothing was sent.`)
    }
    const value = frame.value
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i]
        if (typeof item === "object" && item !== null) stack.push({ value: item, depth: frame.depth + 1, parent: frame, key: i })
      }
    } else {
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key]
        if (typeof item === "object" && item !== null) stack.push({ value: item, depth: frame.depth + 1, parent: frame, key })
      }
    }
  }
}

export interface WalkOptions {
  /** PASSTHROUGH_PATHS: pointers (`*` for one segment) of members or variants sent untokenised and declared. */
  readonly passthroughPaths?: ReadonlyArray<string>
  /** Exact paths let through as well (the gateway: what the attestation declared). */
  readonly declaredPaths?: ReadonlySet<string>
  /** The caller already ran checkEgressDepth on this body (tokeniseRequest does, before its copy): not walked twice. */
  readonly depthChecked?: boolean
}

/**
 * Walks `body` (which the caller may then rewrite at the places returned) with the route's policy. Throws
 * EgressRefusal at the first member or variant the policy refuses or does not name (unless a passthrough pattern
 * matches its path), at a value of a JSON type the policy does not expect, and past MAX_EGRESS_DEPTH.
 */
export const walkEgress = (route: EgressRoute, body: unknown, options: WalkOptions = {}): EgressWalk => {
  if (options.depthChecked !== true) checkEgressDepth(body)
  const root = EGRESS_POLICY.routes[route]
  if (root === undefined) throw new EgressRefusal("unsupported_field", "", `The egress policy has no route ${JSON.stringify(route)}; nothing was sent.`)
  const patterns = compilePatterns(options.passthroughPaths ?? [])
  const declared = options.declaredPaths ?? new Set<string>()
  const walk: EgressWalk = { texts: [], identifiers: [], media: [], passthrough: [] }

  const refuse = (path: string, what: string): void => {
    if (declared.has(path) || matches(patterns, path)) {
      walk.passthrough.push({ path, kind: "field" })
      return
    }
    throw new EgressRefusal(
      "unsupported_field",
      path,
      `${what} at ${path === "" ? "the body" : path} is not sent: the egress policy does not allow it (fail-closed). Nothing was sent. To send it untokenised, name its path in PASSTHROUGH_PATHS.`
    )
  }

  /** Every string inside `value` at any depth, as places (keys are names, not text). */
  const strings = (holder: EgressPlace["holder"], key: string | number, path: string, into: Array<EgressPlace>): void => {
    const value = (holder as Record<string | number, unknown>)[key]
    if (typeof value === "string") into.push({ holder, key, path })
    else if (Array.isArray(value)) value.forEach((_, i) => strings(value, i, child(path, i), into))
    else if (isRecord(value)) for (const k of Object.keys(value)) strings(value, k, child(path, k), into)
  }

  const visit = (node: PolicyNode, holder: EgressPlace["holder"], key: string | number, path: string): void => {
    const value = (holder as Record<string | number, unknown>)[key]
    if (value === null || value === undefined) return
    if (typeof node === "string") {
      switch (node) {
        case "pass":
          return
        case "tokenise":
          return strings(holder, key, path, walk.texts)
        case "tokenise-stable":
          return strings(holder, key, path, walk.identifiers)
        case "refuse":
          return refuse(path, "This field")
      }
    }
    if ("ref" in node) {
      const target = EGRESS_POLICY.definitions[node.ref]
      if (target === undefined) throw new Error(`egress policy: unknown definition ${node.ref}`)
      return visit(target, holder, key, path)
    }
    if ("byType" in node) {
      const type = jsonTypeOf(value) as JsonType
      const chosen = node.byType[type]
      if (chosen === undefined) return refuse(path, `A value of type ${type}`)
      return visit(chosen, holder, key, path)
    }
    if ("object" in node) {
      if (!isRecord(value)) return refuse(path, `A value of type ${jsonTypeOf(value)} (an object was expected)`)
      for (const member of Object.keys(value)) {
        const memberNode = Object.hasOwn(node.object, member) ? node.object[member] : node.other
        if (memberNode === undefined) refuse(child(path, member), `The field ${JSON.stringify(member)}`)
        else visit(memberNode, value, member, child(path, member))
      }
      return
    }
    if ("array" in node) {
      if (!Array.isArray(value)) return refuse(path, `A value of type ${jsonTypeOf(value)} (an array was expected)`)
      value.forEach((_, i) => visit(node.array, value, i, child(path, i)))
      return
    }
    if ("tagged" in node) {
      if (!isRecord(value)) return refuse(path, `A value of type ${jsonTypeOf(value)} (an object was expected)`)
      const tag = value[node.tagged]
      const variant = tag === undefined && node.absent !== undefined ? node.absent : tag
      if (typeof variant !== "string" || !Object.hasOwn(node.variants, variant)) {
        return refuse(path, typeof variant === "string" ? `A part of ${node.tagged} ${JSON.stringify(variant)}` : `A part without a string ${node.tagged}`)
      }
      return visit(node.variants[variant]!, holder, key, path)
    }
    if ("jsonText" in node) {
      if (typeof value !== "string") return strings(holder, key, path, walk.texts)
      walk.texts.push({ holder, key, path, json: true })
      return
    }
    if ("media" in node) {
      walk.media.push({ holder, key, path, kind: node.media })
      return
    }
    throw new Error(`egress policy: malformed node at ${path}`)
  }

  const box = { body }
  visit(root, box, "body", "")
  return walk
}

/**
 * The gateway's check (structure only): the first path where `body` strays from the policy and the attestation's
 * `passthrough` claim does not declare it, or undefined. Media parts must be declared too (the client's opt-in).
 */
export const egressPolicyViolation = (
  route: EgressRoute,
  body: unknown,
  declared: ReadonlyArray<{ readonly path: string }>
): { readonly path: string; readonly message: string } | undefined => {
  const declaredPaths = new Set(declared.map((d) => d.path))
  try {
    const walk = walkEgress(route, body, { declaredPaths })
    const undeclared = walk.media.find((m) => !declaredPaths.has(m.path))
    if (undeclared !== undefined) {
      return { path: undeclared.path, message: `The body carries ${undeclared.kind} content at ${undeclared.path} that the attestation does not declare; nothing was forwarded.` }
    }
    return undefined
  } catch (error) {
    if (error instanceof EgressRefusal) {
      return { path: error.path, message: `The body carries what the egress policy does not allow at ${error.path || "the body"} and the attestation does not declare it; nothing was forwarded.` }
    }
    throw error
  }
}
