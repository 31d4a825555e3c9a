import { Layer } from "effect"
import { ReceiptKeyRoutes } from "./http/ReceiptKeyRoutes.ts"
import { ReceiptRoutes } from "./http/ReceiptRoutes.ts"
import { TransparencyRoutes } from "./http/TransparencyRoutes.ts"
import { KeyEncryptionLive } from "./KeyEncryptionLive.ts"
import { ChainVerifierPg } from "./pg/ChainVerifier.ts"
import { ReceiptKeysPg } from "./pg/ReceiptKeys.ts"
import { ReceiptSealerPg } from "./pg/ReceiptSealer.ts"
import { ReceiptStorePg } from "./pg/ReceiptStore.ts"
import { RetentionPg } from "./pg/Retention.ts"
import { SealerQueue } from "../services/SealerQueue.ts"
import { TransparencyLogPg } from "./pg/TransparencyLog.ts"

/**
 * Receipts (docs/receipts.md): signing keys, the sealer the relay calls, reads, the transparency log and the chain
 * verifier (its background fiber lives as long as this layer). Needs SqlClient, AppConfig and Outbox. The KEK
 * layer is the same value webhooks use, so one process holds one KEK.
 */
export const ReceiptsLive = Layer.mergeAll(ReceiptSealerPg, ReceiptStorePg, TransparencyLogPg, ChainVerifierPg, RetentionPg).pipe(
  Layer.provideMerge(ReceiptKeysPg),
  Layer.provideMerge(SealerQueue.layer),
  Layer.provide(KeyEncryptionLive)
)

/** The receipt HTTP routes: verify, JTI lookup and list, countersign, keys, transparency. */
export const ReceiptRoutesLive = Layer.mergeAll(ReceiptRoutes, ReceiptKeyRoutes, TransparencyRoutes)
