import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { DevOutboxMailer } from "./DevOutboxMailer.ts"
import { SmtpMailer } from "./SmtpMailer.ts"

/** SMTP when `SMTP_URL` is set (sender `MAIL_FROM`), the development outbox table otherwise. */
export const MailerLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) => {
    const smtpUrl = config.settings.smtpUrl
    if (smtpUrl === undefined) return DevOutboxMailer
    return SmtpMailer({ smtpUrl, from: config.settings.mailFrom ?? "Privacy Relay <no-reply@localhost>" })
  })
)
