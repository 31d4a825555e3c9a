/**
 * `npm run bench:gateway-pieces`: pieces of a relayed call's CPU in the gateway, measured in this process, so a
 * change to one of them can be judged on a shared, loaded machine where the whole gateway's CPU per call varies by
 * ±5 % between identical checkouts (issue 41). With BENCH_PIECES_BASE_ROOT the same pieces of another checkout (the
 * code before a change, `git worktree add --detach <dir> <commit>` with node_modules linked) run alternated with this
 * checkout's, round by round, and both medians are printed. The pieces:
 * - the stored-response look-up of one Idempotency-Key that is not stored (layers/pg/Idempotency.ts findRecords) on a
 *   table of 20,000 records: this process's CPU, PostgreSQL's (all `postgres` processes, with DATABASE_URL) and wall;
 * - the attestation check of a bench request and the countersignature of its answer (what every buffered relayed
 *   call with a receipt does: sdks/typescript/src/wire/attestation/v3.ts, wire/receipts/countersign.ts);
 * - the SHA-256 digests of one call (layers/crypto/nodeSha256.ts): the key, an answer, a receipt's text, the
 *   attestation's JCS hash.
 * Settings: docs/benchmark.md, "Settings of bench/gatewayPieces.ts".
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { generateKeyPairSync } from "node:crypto"
import { loadavg } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { decodeAttestationHeader } from "../sdks/typescript/src/wire/attestation/v3.ts"
import { attest, benchBody } from "./lib/attested.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { cpuMsOfCommands } from "./lib/processes.ts"
import { GATEWAY_PIECES_SETTINGS } from "./settings/gatewayPieces.ts"

const settings = readBenchSettings("bench/gatewayPieces.ts", GATEWAY_PIECES_SETTINGS)
const root = join(dirname(fileURLToPath(import.meta.url)), "..")
// The storage the tests use (test/support/databases.ts, from the environment the settings have just checked; a blank
// DATABASE_URL is unset there too): a fresh database on DATABASE_URL, else in-memory PGlite.
const { createTestStorage } = await import("../test/support/databases.ts")
const { DatabaseLive } = await import("../layers/pg/Database.ts")
const { AppConfig } = await import("../services/AppConfig.ts")

/** One checkout's pieces, imported from its own files. */
const piecesOf = async (checkout: string) => {
  const from = (path: string) => import(join(checkout, path))
  const { findRecords } = await from("layers/pg/Idempotency.ts")
  const { verifyAttestation } = await from("sdks/typescript/src/wire/attestation/v3.ts")
  const { countersignAttestation } = await from("sdks/typescript/src/wire/receipts/countersign.ts")
  const { nodeAttestationCrypto } = await from("layers/crypto/nodeAttestationCrypto.ts")
  const { envelopeHashSync } = await from("layers/crypto/envelopeHashSync.ts")
  const { sha256HexSync, jcsSha256HexSync } = await from("layers/crypto/nodeSha256.ts")
  const { nodeSignerFromKeyObject } = await from("layers/crypto/nodeEs256Signer.ts")
  return { findRecords, verifyAttestation, countersignAttestation, nodeAttestationCrypto, envelopeHashSync, sha256HexSync, jcsSha256HexSync, nodeSignerFromKeyObject }
}
type Pieces = Awaited<ReturnType<typeof piecesOf>>

const checkouts: Array<{ readonly label: string; readonly pieces: Pieces }> = [{ label: "this", pieces: await piecesOf(root) }]
if (settings.baseRoot !== undefined) checkouts.unshift({ label: "base", pieces: await piecesOf(settings.baseRoot) })

const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
const requests = await Promise.all(Array.from({ length: 200 }, (_, i) => attest(benchBody(i, false), "Bearer bench")))
const envelopes = requests.map((r) => decodeAttestationHeader(r.headers["x-service-attestation"]!) as object)
const answer = Buffer.from(JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  choices: [{ index: 0, message: { role: "assistant", content: "A short answer." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
}))
const receiptText = JSON.stringify({ v: "v2", chain: { chain_id: "org:v2", seq: 1, prev_hash: "0".repeat(64) }, pad: "r".repeat(600) })

/** The attestation check and the answer's countersignature, as the checkout's relay does them. */
const verifyAndCountersign = async (p: Pieces, i: number) => {
  const r = requests[i % requests.length]!
  const verdict = await p.verifyAttestation({
    header: r.headers["x-service-attestation"],
    engineHeader: r.headers["x-service-engine"],
    route: "chat.completions",
    bodyBytes: new Uint8Array(r.body),
    nowSeconds: Math.floor(Date.now() / 1000),
    crypto: p.nodeAttestationCrypto
  })
  if (!verdict.ok) throw new Error(verdict.message)
  // A checkout whose verdict carries the envelope's JCS text hashes that (layers/relay/relaySettle.ts).
  const envelopeHash = typeof verdict.envelopeJcs === "function"
    ? (e: object) => e === verdict.attestation ? p.sha256HexSync(verdict.envelopeJcs()) : p.envelopeHashSync(e)
    : p.envelopeHashSync
  return p.countersignAttestation({
    attestation: verdict.attestation,
    provider: "local",
    model: "local-chat",
    hashUpstreamRequest: verdict.attestation.claims["v3-attestation"].egress_sha256,
    hashUpstreamResponse: p.sha256HexSync(answer),
    iss: "http://127.0.0.1",
    signer: p.nodeSignerFromKeyObject("bench", privateKey),
    receiptJti: null,
    envelopeHash
  })
}

const digests = (p: Pieces, i: number) => {
  p.sha256HexSync(`svc_bench_key_${i % 100}`)
  p.sha256HexSync(answer)
  p.sha256HexSync(receiptText)
  return p.jcsSha256HexSync(envelopes[i % envelopes.length])
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

const storage = await createTestStorage()
try {
  const layer = DatabaseLive.pipe(Layer.provide(AppConfig.fromEnv({ ...storage.env, LOG_LEVEL: "error" })))
  const lines = [`load ${loadavg().map((x) => x.toFixed(2)).join("/")}, ${settings.calls} calls per round, ${settings.rounds} rounds`]
  await Effect.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`INSERT INTO idempotency_records (scope, idempotency_key, body_hash, status, headers, body_base64, streamed, expires_at)
      SELECT 'org|chat.completions', md5(i::text), 'h', 200, '{}'::jsonb, repeat('x', 2000), false, now() + interval '1 day'
      FROM generate_series(1, 20000) i`)
    const onPostgres = settings.databaseUrl !== undefined
    type Sample = { cpu: number; wall: number; db: number }
    const measure = (run: (i: number) => Effect.Effect<unknown>) =>
      Effect.gen(function*() {
        const cpu = process.cpuUsage()
        const db = onPostgres ? cpuMsOfCommands(["postgres"]) : 0
        const wall = performance.now()
        for (let i = 0; i < settings.calls; i++) yield* run(i)
        const used = process.cpuUsage(cpu)
        return {
          cpu: (used.user + used.system) / settings.calls,
          wall: ((performance.now() - wall) * 1000) / settings.calls,
          db: onPostgres ? ((cpuMsOfCommands(["postgres"]) - db) * 1000) / settings.calls : 0
        } satisfies Sample
      })
    const pieces: Array<{ readonly name: string; readonly run: (p: Pieces, i: number) => Effect.Effect<unknown>; readonly io: boolean }> = [
      {
        name: "idempotency look-up of one key",
        io: true,
        run: (p, i) => Effect.orDie(p.findRecords(sql, [{ scope: "org|chat.completions", key: `absent-${i}`, now: Date.now() }]))
      },
      { name: "attestation check + countersignature", io: false, run: (p, i) => Effect.promise(() => verifyAndCountersign(p, i)) },
      { name: "SHA-256 digests of one call", io: false, run: (p, i) => Effect.sync(() => digests(p, i)) }
    ]
    for (const piece of pieces) {
      for (const c of checkouts) yield* measure((i) => piece.run(c.pieces, i)) // warm-up
      const samples = new Map<string, Array<Sample>>(checkouts.map((c) => [c.label, []]))
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? checkouts : [...checkouts].reverse()
        for (const c of order) samples.get(c.label)!.push(yield* measure((i) => piece.run(c.pieces, i)))
      }
      for (const c of checkouts) {
        const s = samples.get(c.label)!
        const cpu = `${median(s.map((x) => x.cpu)).toFixed(1)} us CPU`
        const io = piece.io ? `, wall ${median(s.map((x) => x.wall)).toFixed(1)} us${onPostgres ? `, PostgreSQL ${median(s.map((x) => x.db)).toFixed(1)} us CPU` : ""}` : ""
        lines.push(`${piece.name.padEnd(38)} ${c.label.padEnd(4)} ${cpu}${io}`)
      }
    }
  }).pipe(Effect.provide(layer)))
  process.stdout.write(lines.join("\n") + "\n")
} finally {
  await storage.drop()
}
