import { Duration, Effect, Layer, Schedule, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { type ConsistencyProof, type InclusionProof, type SignedTreeHead, TransparencyLog, TreeSizeOutOfRange } from "../../services/TransparencyLog.ts"
import { bytesToHex, hexToBytes } from "../../sdks/typescript/src/wire/crypto/hex.ts"
import { rfc3339Millis } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { MerkleTree } from "../../sdks/typescript/src/wire/receipts/merkle.ts"
import { signEnvelope } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { receiptLeafHashHexSync } from "../crypto/receiptLeafHashSync.ts"

const SEQUENCE_BATCH = 1000

/**
 * Leaves live in `transparency_leaves` (dense `leaf_index`). Sequencing takes the single `transparency_log` row
 * lock, so leaf indexes are assigned by one process at a time and stay dense; this is off the sealing path, so
 * tenants never serialise on each other. Each process mirrors the leaves in an in-memory MerkleTree (append-only,
 * so it only ever reads the rows it has not seen) and answers heads and proofs from it.
 */
export const TransparencyLogPg = Layer.effect(
  TransparencyLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ReceiptKeys
    const config = yield* AppConfig
    const intervalMs = config.settings.transparencySequenceMs
    const tree = new MerkleTree()
    const treeLock = Semaphore.makeUnsafe(1)

    const sequenceBatch = sql.withTransaction(Effect.gen(function*() {
      const [log] = yield* sql<{ tree_size: string }>`SELECT tree_size::text AS tree_size FROM transparency_log WHERE id = 1 FOR UPDATE`
      const size = Number(log!.tree_size)
      const pending = yield* sql<{ jti: string; receipt_hash: string }>`
        SELECT jti, receipt_hash FROM transparency_pending ORDER BY created_at, jti LIMIT ${SEQUENCE_BATCH}`
      if (pending.length === 0) return { size, more: false }
      const leaves = pending.map((p, i) => ({
        leaf_index: String(size + i),
        jti: p.jti,
        receipt_hash: p.receipt_hash,
        leaf_hash: receiptLeafHashHexSync(p.receipt_hash)
      }))
      yield* sql`INSERT INTO transparency_leaves ${sql.insert(leaves as [typeof leaves[number], ...Array<typeof leaves[number]>])}`
      yield* sql`DELETE FROM transparency_pending WHERE ${sql.in("jti", pending.map((p) => p.jti))}`
      yield* sql`UPDATE transparency_log SET tree_size = ${String(size + leaves.length)}::bigint WHERE id = 1`
      return { size: size + leaves.length, more: pending.length === SEQUENCE_BATCH }
    })).pipe(Effect.orDie)

    const sequence: Effect.Effect<number> = Effect.gen(function*() {
      let result = yield* sequenceBatch
      while (result.more) result = yield* sequenceBatch
      return result.size
    })

    /** Brings the in-memory tree up to date with the stored leaves. */
    const sync = treeLock.withPermits(1)(Effect.gen(function*() {
      for (;;) {
        const rows = yield* sql<{ leaf_hash: string }>`
          SELECT leaf_hash FROM transparency_leaves WHERE leaf_index >= ${String(tree.size)}::bigint
          ORDER BY leaf_index LIMIT 10000`.pipe(Effect.orDie)
        for (const row of rows) yield* Effect.promise(() => tree.append(hexToBytes(row.leaf_hash)))
        if (rows.length < 10000) return tree.size
      }
    }))

    /** Signed with the key current while the head is signed (under the rotation lock: never a retired key). */
    const signHead = (treeSize: number) =>
      keys.withCurrent((key) => Effect.gen(function*() {
        const root = yield* Effect.promise(() => tree.rootHash(treeSize))
        const body = {
          v: "transparency-sth-v1" as const,
          alg: "ES256" as const,
          kid: key.kid,
          iss: config.publicBaseUrl,
          tree_size: treeSize,
          root_hash: bytesToHex(root),
          timestamp: rfc3339Millis(new Date())
        }
        const sig = yield* Effect.promise(() => signEnvelope(body, (bytes) => key.signer.sign(bytes)))
        return { ...body, sig } satisfies SignedTreeHead
      }))

    if (intervalMs > 0) {
      yield* Effect.forkScoped(
        Effect.repeat(
          sequence.pipe(Effect.catchCause((cause) => Effect.logWarning("transparency sequencing failed", cause))),
          Schedule.spaced(Duration.millis(intervalMs))
        )
      )
    }

    return TransparencyLog.of({
      sequence,
      treeHead: Effect.gen(function*() {
        yield* sequence
        return yield* signHead(yield* sync)
      }),
      inclusionProof: (receiptId) =>
        Effect.gen(function*() {
          yield* sequence
          const treeSize = yield* sync
          const rows = yield* sql<{ leaf_index: string; receipt_hash: string; leaf_hash: string }>`
            SELECT leaf_index::text AS leaf_index, receipt_hash, leaf_hash FROM transparency_leaves WHERE jti = ${receiptId}`.pipe(
            Effect.orDie
          )
          if (rows.length === 0) return undefined
          const index = Number(rows[0]!.leaf_index)
          if (index >= treeSize) return undefined
          const path = yield* Effect.promise(() => tree.inclusionProof(index, treeSize))
          return {
            receipt_id: receiptId,
            leaf_index: index,
            tree_size: treeSize,
            receipt_hash: rows[0]!.receipt_hash,
            leaf_hash: rows[0]!.leaf_hash,
            audit_path: path.map(bytesToHex),
            sth: yield* signHead(treeSize)
          } satisfies InclusionProof
        }),
      consistencyProof: (first, second) =>
        Effect.gen(function*() {
          yield* sequence
          const treeSize = yield* sync
          const to = second ?? treeSize
          if (!(first >= 1 && first <= to && to <= treeSize)) {
            return yield* new TreeSizeOutOfRange({ first, second: to, treeSize })
          }
          const path = yield* Effect.promise(() => tree.consistencyProof(first, to))
          return { first, second: to, consistency_path: path.map(bytesToHex), sth: yield* signHead(to) } satisfies ConsistencyProof
        })
    })
  })
)
