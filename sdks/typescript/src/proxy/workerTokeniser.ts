/**
 * Tokenises request bodies in worker threads, so the proxy's own thread never computes for long: it
 * answers `/healthz`, reads SIGTERM and serves other clients while a long prompt is being tokenised, and
 * it stops waiting the moment a client leaves or a budget runs out (the worker is told to cancel and
 * stops at its next window of text). Node-only. See docs/decisions.md ("Local proxy: tokenising long
 * requests").
 *
 * A short body (at most `inlineMaxChars` characters of text, a chat turn) is tokenised on the calling thread
 * instead, with the same engine, name model and alias secret: it takes well under a millisecond (a few with the
 * built-in name model), less than the two thread hand-offs and the copy of the body a worker costs (issue 24:
 * the proxy's added latency on a "Say hello." call). Nothing else differs: same tokens, same attestation.
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import type { AttestationRoute } from "../wire/attestation/v3.ts"
import { EgressRefusal, InvalidRequestBody, loadBuiltinNameModel, NameModelUnavailable } from "../tokeniser/index.ts"
import { nameModelFor } from "./nameModelFor.ts"
import type { NameModelSetting } from "./proxyConfig.ts"
import { imageRedactorFor, inProcessTokeniser, type RequestTokeniser, type TokenisedBody, type TokeniserSettings } from "./RequestTokeniser.ts"
import { textAtMost } from "./textSize.ts"
import type { FromWorker, ToWorker, WorkerSettings } from "./tokeniserWorker.ts"

/**
 * Bodies with at most this many characters of text are tokenised on the calling thread. 4096 characters take about
 * 0.1 ms with names off and a few ms with the built-in name model; longer ones go to a worker.
 */
export const DEFAULT_INLINE_MAX_CHARS = 4_096

/** One worker per spare core, at most two: a local proxy serves one user. */
export const defaultWorkerCount = (): number => Math.max(1, Math.min(2, availableParallelism() - 1))

interface Pending {
  readonly settle: (answer: FromWorker) => void
  readonly fail: (error: Error) => void
}

interface Slot {
  readonly worker: Worker
  readonly pending: Map<number, Pending>
}

const WORKER_URL = new URL("./tokeniserWorker.ts", import.meta.url)

const errorOf = (answer: Extract<FromWorker, { type: "failed" }>): Error => {
  switch (answer.kind) {
    case "name_model_unavailable":
      return new NameModelUnavailable(answer.message)
    case "invalid_request":
      return new InvalidRequestBody(answer.message)
    case "egress_refused":
      return new EgressRefusal(answer.refusal!.code, answer.refusal!.path, answer.message, answer.refusal!.kind)
    default:
      return new Error(`the tokeniser worker could not tokenise the request (${answer.kind})`)
  }
}

export interface WorkerTokeniserOptions extends TokeniserSettings {
  readonly workers?: number
  /** Bodies with at most this many characters of text are tokenised on the calling thread; 0: always a worker. */
  readonly inlineMaxChars?: number
}

export const workerTokeniser = (nameModel: NameModelSetting, options: WorkerTokeniserOptions = {}): RequestTokeniser => {
  const workers = options.workers ?? defaultWorkerCount()
  const settings: WorkerSettings = {
    nameModel,
    stableAliasSecret: options.stableAliasSecret,
    identifierSecret: options.identifierSecret,
    mediaPolicy: options.mediaPolicy,
    passthroughPaths: options.passthroughPaths
  }
  const slots: Array<Slot | undefined> = Array.from({ length: workers }, () => undefined)
  let nextId = 1
  let closed = false

  const spawn = (index: number): Slot => {
    const worker = new Worker(WORKER_URL, { workerData: settings })
    // An idle worker must not keep the process alive; the server's socket does that.
    worker.unref()
    const slot: Slot = { worker, pending: new Map() }
    const failAll = (error: Error) => {
      if (slots[index] === slot) slots[index] = undefined
      for (const pending of slot.pending.values()) pending.fail(error)
      slot.pending.clear()
    }
    worker.on("message", (answer: FromWorker) => {
      const pending = slot.pending.get(answer.id)
      slot.pending.delete(answer.id)
      pending?.settle(answer)
    })
    worker.on("error", () => failAll(new Error("the tokeniser worker failed")))
    worker.on("exit", () => failAll(new Error("the tokeniser worker stopped")))
    slots[index] = slot
    return slot
  }

  /** The worker with the fewest requests in hand (started if it is not running). */
  const pick = (): Slot => {
    let best = 0
    for (let i = 1; i < slots.length; i++) {
      if ((slots[i]?.pending.size ?? 0) < (slots[best]?.pending.size ?? 0)) best = i
    }
    return slots[best] ?? spawn(best)
  }

  // Started now so the name library is loaded before the first request arrives.
  for (let i = 0; i < workers; i++) spawn(i)

  const inlineMaxChars = options.inlineMaxChars ?? DEFAULT_INLINE_MAX_CHARS
  const namesHere = nameModelFor(nameModel)
  const here = inProcessTokeniser(namesHere, settings, imageRedactorFor(namesHere, settings))
  // The built-in name model's code loads on first use; this thread loads it now too, for the short bodies it
  // tokenises itself. A failure is not fatal here: the first request that needs it reports it (fail-closed).
  if (inlineMaxChars > 0 && nameModel.kind === "builtin") void loadBuiltinNameModel().catch(() => {})

  const tokenise = (route: AttestationRoute, body: unknown, signal: AbortSignal, callSecret?: Uint8Array): Promise<TokenisedBody> => {
    if (closed) return Promise.reject(new Error("the tokeniser is closed"))
    signal.throwIfAborted()
    if (inlineMaxChars > 0 && textAtMost(body, inlineMaxChars)) return here.tokenise(route, body, signal, callSecret)
    const slot = pick()
    const id = nextId++
    return new Promise<TokenisedBody>((resolve, reject) => {
      const onAbort = () => {
        slot.pending.delete(id)
        slot.worker.postMessage({ type: "cancel", id } satisfies ToWorker)
        reject(signal.reason)
      }
      signal.addEventListener("abort", onAbort, { once: true })
      slot.pending.set(id, {
        settle: (answer) => {
          signal.removeEventListener("abort", onAbort)
          if (answer.type === "done") resolve(answer)
          else reject(errorOf(answer))
        },
        fail: (error) => {
          signal.removeEventListener("abort", onAbort)
          reject(error)
        }
      })
      slot.worker.postMessage({ type: "tokenise", id, route, body, callSecret } satisfies ToWorker)
    })
  }

  return {
    tokenise,
    close: async () => {
      closed = true
      await Promise.all([...slots.map((slot) => slot?.worker.terminate()), here.close()])
    }
  }
}
