import { Context, Layer } from "effect"

/** What the receipt sealer has accepted and not yet written, at one instant. */
export interface SealerQueueStats {
  /** Jobs (settlements, seals, holds, releases) waiting for their batch or in the batch being written. */
  readonly pendingJobs: number
  /** Organisations whose sealing actor is running (has a queue). */
  readonly activeTenants: number
}

/**
 * The sealer's queue as /metrics reads it (gateway_sealer_pending_jobs, gateway_sealer_active_tenants). A small
 * interface on purpose: the sealer attaches a reader of its batcher when it is built, the metrics route only asks;
 * neither knows the other's implementation. Before a sealer attaches (or without one) the queue reads as empty.
 */
export class SealerQueue extends Context.Service<SealerQueue, {
  readonly attach: (read: () => SealerQueueStats) => void
  readonly stats: () => SealerQueueStats
}>()("privacy-relay/SealerQueue") {
  static readonly layer = Layer.sync(SealerQueue, () => {
    let read: () => SealerQueueStats = () => ({ pendingJobs: 0, activeTenants: 0 })
    return SealerQueue.of({ attach: (reader) => void (read = reader), stats: () => read() })
  })
}
