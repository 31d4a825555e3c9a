import { Context, Data, Effect } from "effect"

/** The mail server did not take the message (down, refused, timed out): the sender may try again later. */
export class MailUnavailable extends Data.TaggedError("MailUnavailable")<{}> {}

export interface MailMessage {
  readonly to: string
  readonly subject: string
  /** Plain text only: no tracking pixels, no remote content. */
  readonly text: string
}

/**
 * Outbound e-mail (verification links). SMTP when `SMTP_URL` is set (layers/mail/SmtpMailer.ts), otherwise the
 * development outbox table `mail_outbox` (layers/mail/DevOutboxMailer.ts). Fails with MailUnavailable.
 */
export class Mailer extends Context.Service<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailUnavailable>
  /** `smtp` or `dev-outbox`, for start-up logs and docs. */
  readonly transport: string
}>()("privacy-relay/Mailer") {}
