import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { DevOutboxMailer } from "./DevOutboxMailer.ts"
import { SmtpMailer } from "./SmtpMailer.ts"

/** SMTP when `SMTP_URL` is set (sender `MAIL_FROM`), the development outbox table otherwise. */
export const MailerLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) => {
    const smtpUrl = config.env.SMTP_URL?.trim()
    if (smtpUrl === undefined || smtpUrl === "") return DevOutboxMailer
    return SmtpMailer({ smtpUrl, from: config.env.MAIL_FROM?.trim() || "Privacy Relay <no-reply@localhost>" })
  })
)
