import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

export interface MailMessage {
  readonly to: string
  readonly subject: string
  /** Plain text only: no tracking pixels, no remote content. */
  readonly text: string
}

/**
 * Outbound e-mail (verification links). SMTP when `SMTP_URL` is set (layers/mail/SmtpMailer.ts), otherwise the
 * development outbox table `mail_outbox` (layers/mail/DevOutboxMailer.ts). Fails with 503 `mail_unavailable`.
 */
export class Mailer extends Context.Service<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, ApiError>
  /** `smtp` or `dev-outbox`, for start-up logs and docs. */
  readonly transport: string
}>()("privacy-relay/Mailer") {}
