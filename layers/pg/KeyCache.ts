import { PgClient, PgConnection } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Queue, Schedule } from "effect"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import { makePrincipalCache, type PrincipalCache } from "../../src/keys/principalCache.ts"
import { PgliteNotifications } from "./SqlPglite.ts"

/**
 * How long an authenticated key may be served from memory without asking the database again. Every change to a key
 * is announced by the database (migration 0011) and evicts it at once on every node; this bounds only a notification
 * lost while a node's listener was reconnecting before it noticed. 30 s keeps that window short while a busy key
 * still skips almost every lookup.
 */
export const KEY_CACHE_TTL_MS = 30_000

/** Far more keys than are active at once on one node; about 1 KB each, so the cap bounds memory at ~10 MB. */
const KEY_CACHE_MAX_ENTRIES = 10_000

/** Payload: the id of the api_keys row that changed. */
export const KEY_CHANGES_CHANNEL = "api_keys_changed"

/** Pause between attempts to (re)open the change listener while PostgreSQL cannot be reached. */
const LISTEN_RETRY = Schedule.spaced(Duration.seconds(1))

/**
 * The in-process cache of `Keys.authenticate` (positive lookups only: an unknown key always asks the database, so
 * a key minted a moment ago, on any node, works at once), and how changes to api_keys reach it.
 *
 * The database announces every change to what authenticating a key yields on `api_keys_changed` (triggers of
 * migration 0011: whoever changes the row, the gateway, the CLI or an operator's SQL), delivered to every node's
 * listener when the transaction commits; each node evicts the key on receipt. Code that changes a key also calls
 * `evict` after its transaction, so this node forgets it without waiting for the notification. With PostgreSQL the
 * listener is a supervised fiber on its own connection: while it is not listening (at start, after a failure) the
 * cache is off and empty, and it is cleared again once LISTEN is confirmed, since changes in between were not heard.
 * PGlite is one in-process session: it listens there, and its notifications cannot be lost.
 */
export class KeyCache extends Context.Service<KeyCache, {
  readonly principals: PrincipalCache<GatewayPrincipal>
  /** After the transaction that changed the key: this node forgets it at once. */
  readonly evict: (keyId: string) => Effect.Effect<void>
}>()("privacy-relay/KeyCache") {
  static readonly layer = Layer.effect(
    KeyCache,
    Effect.gen(function*() {
      const pg = yield* Effect.serviceOption(PgClient.PgClient)
      const principals = makePrincipalCache<GatewayPrincipal>({
        maxEntries: KEY_CACHE_MAX_ENTRIES,
        ttlMs: KEY_CACHE_TTL_MS,
        enabled: false
      })
      const evict = (keyId: string) => Effect.sync(() => principals.evictKey(keyId))

      if (Option.isNone(pg)) {
        const pglite = yield* Effect.serviceOption(PgliteNotifications)
        if (Option.isSome(pglite)) {
          yield* pglite.value.listen(KEY_CHANGES_CHANNEL, (keyId) => principals.evictKey(keyId)).pipe(Effect.orDie)
          principals.setEnabled(true)
        }
        return KeyCache.of({ principals, evict })
      }

      // A dedicated connection, so the listener does not hold one of the query pool's connections for ever.
      const listenOnce = Effect.scoped(Effect.gen(function*() {
        const connection = yield* PgConnection.make({ ...pg.value.config, applicationName: "privacy-relay-key-cache" })
        const notifications = yield* connection.listen(KEY_CHANGES_CHANNEL)
        principals.setEnabled(true)
        return yield* Effect.forever(Effect.map(Queue.take(notifications), (n) => principals.evictKey(n.payload)))
      })).pipe(
        // Whatever ended the listening, changes are no longer heard: serve nothing from memory until it is back.
        Effect.ensuring(Effect.sync(() => principals.setEnabled(false))),
        Effect.catchCause((cause) => Effect.logWarning("api key change listener stopped; key cache off until it reconnects", cause))
      )
      yield* listenOnce.pipe(Effect.repeat(LISTEN_RETRY), Effect.forkScoped)

      return KeyCache.of({ principals, evict })
    })
  )
}
