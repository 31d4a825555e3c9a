import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { Outbox } from "../../services/Outbox.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { ReceiptSealer } from "../../services/ReceiptSealer.ts"
import {
  envelopeHash,
  failedChainId,
  GENESIS_PREV_HASH,
  newJti,
  rfc3339Millis,
  unixSeconds,
  v1ChainId,
  v2ChainId
} from "../../src/receipts/chain.ts"
import { signReceiptV1 } from "../../src/receipts/envelope-v1.ts"
import { signFailedReceiptV2 } from "../../src/receipts/envelope-v2-failed.ts"
import { signReceiptV2 } from "../../src/receipts/envelope-v2.ts"
import { makeTenantSerialiser } from "../TenantSerialiser.ts"

type ChainKind = "v2" | "v1" | "failed"
interface ChainHead {
  readonly seq: number
  readonly prev_hash: string
}

/**
 * Sequence numbers come from `receipt_chains` (one row per chain: last_seq, last_hash). Sealing locks the chain's
 * row for the rest of the transaction with one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` (creates the head
 * on first use, otherwise takes the row lock and reads it), signs, inserts the receipt and moves the head. Any
 * number of gateway processes on one database therefore queue on that row and never fork a chain; the UNIQUE
 * (chain_id, seq) constraint is the backstop. Inside a process a per-organisation serialiser orders the sealers
 * first, so at most one fiber per tenant per process waits on the database lock. The serialiser is taken inside
 * the transaction: with PGlite (one session, a transaction holds it) taking it outside could deadlock against a
 * caller that already holds the session.
 */
export const ReceiptSealerPg = Layer.effect(
  ReceiptSealer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ReceiptKeys
    const outbox = yield* Outbox
    const iss = (yield* AppConfig).publicBaseUrl
    const serialise = makeTenantSerialiser()

    /** Locks the heads of the given chains (in this order) and returns the next link of each. */
    const lockHeads = (orgId: string, chains: readonly [readonly [string, ChainKind], ...Array<readonly [string, ChainKind]>]) =>
      Effect.gen(function*() {
        const heads = chains.map(([chainId, kind]) => ({
          chain_id: chainId,
          org_id: orgId,
          kind,
          last_seq: "0",
          last_hash: GENESIS_PREV_HASH
        }))
        const rows = yield* sql<{ chain_id: string; last_seq: string; last_hash: string }>`
          INSERT INTO receipt_chains ${
sql.insert(heads as [typeof heads[number], ...Array<typeof heads[number]>])}
          ON CONFLICT (chain_id) DO UPDATE SET chain_id = EXCLUDED.chain_id
          RETURNING chain_id, last_seq::text AS last_seq, last_hash`
        return chains.map(([chainId]): ChainHead => {
          const row = rows.find((r) => r.chain_id === chainId)!
          return { seq: Number(BigInt(row.last_seq) + 1n), prev_hash: row.last_hash }
        })
      })

    const moveHead = (chainId: string, seq: number, hash: string) =>
      sql`UPDATE receipt_chains SET last_seq = ${String(seq)}::bigint, last_hash = ${hash} WHERE chain_id = ${chainId}`

    const seal = (input: Parameters<ReceiptSealer["Service"]["seal"]>[0]) =>
      Effect.gen(function*() {
        const key = yield* keys.current
        const v2Chain = v2ChainId(input.orgId)
        const v1Chain = v1ChainId(input.accountId)
        const [v2Head, v1Head] = yield* lockHeads(input.orgId, [[v2Chain, "v2"], [v1Chain, "v1"]])
        const jti = newJti()
        const now = new Date()
        const iat = unixSeconds(now)
        const r = input.routingDecision
        const [v2, v1] = yield* Effect.promise(() =>
          Promise.all([
            signReceiptV2({
              iss,
              jti,
              iat,
              timestamp: rfc3339Millis(now),
              request_id: input.providerResponseId,
              provider: input.provider,
              model: input.model,
              ...(r === undefined ? {} : {
                routing_decision: {
                  from: r.from,
                  to: r.to,
                  chosen_model: r.chosen_model,
                  classifier: r.classifier,
                  savings_pct: r.savings_pct,
                  strategy: r.strategy
                }
              }),
              input_tokens: input.inputTokens,
              output_tokens: input.outputTokens,
              hash_upstream_request: input.hashUpstreamRequest,
              hash_upstream_response: input.hashUpstreamResponse,
              chain: { chain_id: v2Chain, seq: v2Head!.seq, prev_hash: v2Head!.prev_hash },
              extensions: { request_id: input.requestId }
            }, key.signer),
            signReceiptV1({
              iss,
              sub: input.keyPrefix,
              jti,
              iat,
              chain: { chain_id: v1Chain, seq: v1Head!.seq, prev_hash: v1Head!.prev_hash },
              claims: {
                capability: input.capability,
                provider: input.provider,
                model: input.model,
                tokens_in: input.inputTokens,
                tokens_out: input.outputTokens,
                hash_upstream_request: input.hashUpstreamRequest,
                hash_upstream_response: input.hashUpstreamResponse,
                routing_decision: r === undefined
                  ? null
                  : { from: r.from, to: r.to, chosen_model: r.chosen_model, strategy: r.strategy, classifier: r.classifier },
                tokenisation_mode: "client",
                engine_version: input.engineVersion === "" ? null : input.engineVersion
              }
            }, key.signer)
          ])
        )
        const [v2Hash, v1Hash] = yield* Effect.promise(() => Promise.all([envelopeHash(v2), envelopeHash(v1)]))
        yield* sql`INSERT INTO receipts_v2 ${
          sql.insert({ jti, org_id: input.orgId, chain_id: v2Chain, seq: String(v2.chain.seq), envelope: JSON.stringify(v2) })
        }`
        yield* sql`INSERT INTO receipts_v1 ${
          sql.insert({
            jti,
            org_id: input.orgId,
            account_id: input.accountId,
            chain_id: v1Chain,
            seq: String(v1.chain.seq),
            model: input.model,
            capability: input.capability,
            envelope: JSON.stringify(v1)
          })
        }`
        yield* moveHead(v2Chain, v2.chain.seq, v2Hash)
        yield* moveHead(v1Chain, v1.chain.seq, v1Hash)
        yield* sql`INSERT INTO transparency_pending ${sql.insert({ jti, receipt_hash: v2Hash })}`
        yield* outbox.record({
          orgId: input.orgId,
          event: "receipt.signed",
          data: {
            jti,
            kid: key.kid,
            chain_id: v2Chain,
            seq: v2.chain.seq,
            v1_chain_id: v1Chain,
            v1_seq: v1.chain.seq,
            provider: input.provider,
            model: input.model,
            capability: input.capability,
            input_tokens: input.inputTokens,
            output_tokens: input.outputTokens,
            request_id: input.requestId
          }
        })
        return { v2, v1, jti }
      })

    const sealFailed = (input: Parameters<ReceiptSealer["Service"]["sealFailed"]>[0]) =>
      Effect.gen(function*() {
        const key = yield* keys.current
        const chainId = failedChainId(input.orgId)
        const [head] = yield* lockHeads(input.orgId, [[chainId, "failed"]])
        const now = new Date()
        const receipt = yield* Effect.promise(() =>
          signFailedReceiptV2({
            iss,
            jti: newJti(),
            iat: unixSeconds(now),
            timestamp: rfc3339Millis(now),
            status: input.status,
            error_code: input.errorCode,
            request_id: null,
            provider: input.provider ?? null,
            model: input.model ?? null,
            hash_upstream_request: input.hashUpstreamRequest ?? null,
            hash_upstream_response: null,
            chain: { chain_id: chainId, seq: head!.seq, prev_hash: head!.prev_hash },
            extensions: { request_id: input.requestId }
          }, key.signer)
        )
        const hash = yield* Effect.promise(() => envelopeHash(receipt))
        yield* sql`INSERT INTO receipts_failed ${
          sql.insert({
            jti: receipt.jti,
            org_id: input.orgId,
            key_id: input.keyId,
            chain_id: chainId,
            seq: String(receipt.chain.seq),
            status: input.status,
            error_code: input.errorCode,
            envelope: JSON.stringify(receipt)
          })
        }`
        yield* moveHead(chainId, receipt.chain.seq, hash)
        yield* sql`INSERT INTO transparency_pending ${sql.insert({ jti: receipt.jti, receipt_hash: hash })}`
        return receipt
      })

    return ReceiptSealer.of({
      seal: (input) =>
        sql.withTransaction(serialise(input.orgId, seal(input))).pipe(Effect.orDie, Effect.withSpan("ReceiptSealer.seal")),
      sealFailed: (input) =>
        sql.withTransaction(serialise(`failed:${input.orgId}`, sealFailed(input))).pipe(
          Effect.orDie,
          Effect.withSpan("ReceiptSealer.sealFailed")
        )
    })
  })
)
