import { Layer } from "effect"
import { KeyEncryptionLive } from "./KeyEncryptionLive.ts"
import { WebhooksPg } from "./pg/Webhooks.ts"
import { WebhookDispatcherLive } from "./WebhookDispatcherLive.ts"

/**
 * Webhook management plus this process's dispatcher (unless WEBHOOK_DISPATCHER=off). KeyEncryption stays in the
 * output so other capabilities (BYOK credentials) can seal their secrets under the same KEK.
 */
export const WebhooksLive = Layer.mergeAll(WebhooksPg, WebhookDispatcherLive).pipe(Layer.provideMerge(KeyEncryptionLive))
