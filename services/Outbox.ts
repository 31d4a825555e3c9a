import { Context, Effect } from "effect"

/**
 * Records an event for webhook delivery. Call it INSIDE the transaction of the change that caused the event
 * (`sql.withTransaction`): the row commits or rolls back with that change, so no event is lost or invented.
 * Returns the event id (UUID v4), which deliveries carry as `event_id` / `X-Service-Webhook-Event-Id`.
 */
export class Outbox extends Context.Service<Outbox, {
  readonly record: (input: { readonly orgId: string; readonly event: string; readonly data: Readonly<Record<string, unknown>> }) =>
    Effect.Effect<string>
}>()("privacy-relay/Outbox") {}
