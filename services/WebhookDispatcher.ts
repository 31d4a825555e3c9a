import { Context, type Effect } from "effect"
import type { LookupAll } from "../src/webhooks/ssrf.ts"

/**
 * The webhook dispatcher running in this process (absent when WEBHOOK_DISPATCHER=off). `wake` makes it look
 * for work now instead of at its next poll; other processes find the work at their next poll.
 */
export class WebhookDispatcher extends Context.Service<WebhookDispatcher, {
  readonly wake: Effect.Effect<void>
}>()("privacy-relay/WebhookDispatcher") {}

/**
 * How the dispatcher resolves endpoint host names before each attempt. The system resolver unless a test
 * provides another (to make a name resolve to a private address without touching real DNS).
 */
export const WebhookLookup = Context.Reference<{ readonly lookup: LookupAll | undefined }>("privacy-relay/WebhookLookup", {
  defaultValue: () => ({ lookup: undefined })
})
