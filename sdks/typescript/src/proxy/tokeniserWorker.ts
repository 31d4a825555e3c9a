/**
 * Entry point of a tokeniser worker thread (started by workerTokeniser.ts; Node-only). It tokenises the
 * request bodies it is sent, one message each, and stops one when the main thread cancels it (the client
 * went away or its time budget ran out). The engine yields between windows of text, so a cancel message
 * is read at the next window of names (or after the structured detectors' single pass). Answers carry the
 * tokenised bytes (transferred), the alias map and counts.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { AttestationRoute } from "../wire/attestation/v3.ts"
import { EgressRefusal, InvalidRequestBody, loadBuiltinNameModel, NameModelUnavailable, tokeniseRequest } from "../tokeniser/index.ts"
import { nameModelFor } from "./nameModelFor.ts"
import type { NameModelSetting } from "./proxyConfig.ts"
import { imageRedactorFor, requestOptions, type TokeniserSettings } from "./RequestTokeniser.ts"

export type ToWorker =
  | { readonly type: "tokenise"; readonly id: number; readonly route: AttestationRoute; readonly body: unknown; readonly callSecret: Uint8Array | undefined }
  | { readonly type: "cancel"; readonly id: number }

export type FailureKind = "name_model_unavailable" | "invalid_request" | "egress_refused" | "cancelled" | "failed"

export type FromWorker =
  | {
      readonly type: "done"
      readonly id: number
      readonly bodyBytes: Uint8Array
      readonly map: ReadonlyMap<string, string>
      readonly detectorsFired: Record<string, number>
      readonly canonical: boolean
      readonly passthrough: ReadonlyArray<{ readonly path: string; readonly kind: string }>
    }
  | {
      readonly type: "failed"
      readonly id: number
      readonly kind: FailureKind
      readonly message: string
      /** An egress refusal's code, path and media kind (paths and kinds, never values). */
      readonly refusal?: { readonly code: EgressRefusal["code"]; readonly path: string; readonly kind: EgressRefusal["kind"] }
    }

const port = parentPort
if (port === null) throw new Error("tokeniserWorker.ts runs as a worker thread only")

export interface WorkerSettings extends TokeniserSettings {
  readonly nameModel: NameModelSetting
}

const settings = workerData as WorkerSettings
const names = nameModelFor(settings.nameModel)
// The built-in name model's code loads on first use; a worker loads it now, so the first request does not wait for it.
if (settings.nameModel.kind === "builtin") void loadBuiltinNameModel().catch(() => {})
// Worker threads get plain settings: under MEDIA_POLICY=redact this thread builds its own image redactor.
const redactImage = imageRedactorFor(names, settings)
const running = new Map<number, AbortController>()

const kindOf = (error: unknown, cancelled: boolean): FailureKind => {
  if (cancelled) return "cancelled"
  if (error instanceof NameModelUnavailable) return "name_model_unavailable"
  if (error instanceof InvalidRequestBody) return "invalid_request"
  if (error instanceof EgressRefusal) return "egress_refused"
  return "failed"
}

const tokenise = async (id: number, route: AttestationRoute, body: unknown, callSecret: Uint8Array | undefined) => {
  const controller = new AbortController()
  running.set(id, controller)
  try {
    const out = await tokeniseRequest(route, body, requestOptions(route, names, settings, controller.signal, callSecret, redactImage))
    const answer: FromWorker = {
      type: "done",
      id,
      bodyBytes: out.bodyBytes,
      map: out.map,
      detectorsFired: out.detectorsFired,
      canonical: out.canonical,
      passthrough: out.passthrough
    }
    port.postMessage(answer, [out.bodyBytes.buffer as ArrayBuffer])
  } catch (error) {
    const kind = kindOf(error, controller.signal.aborted)
    // Messages of unexpected errors could quote request content: only the known kinds carry theirs.
    const message = kind === "name_model_unavailable" || kind === "invalid_request" || kind === "egress_refused" ? (error as Error).message : kind
    const refusal = error instanceof EgressRefusal ? { refusal: { code: error.code, path: error.path, kind: error.kind } } : {}
    port.postMessage({ type: "failed", id, kind, message, ...refusal } satisfies FromWorker)
  } finally {
    running.delete(id)
  }
}

port.on("message", (message: ToWorker) => {
  if (message.type === "cancel") running.get(message.id)?.abort()
  else void tokenise(message.id, message.route, message.body, message.callSecret)
})

// Load the name library's lexicon now, not during the first request.
if (names !== "off") void names.detect("Warm up with Ada Lovelace.").catch(() => undefined)
