import { Effect, Layer } from "effect"
import nodemailer from "nodemailer"
import { MailUnavailable, Mailer } from "../../services/Mailer.ts"

/**
 * E-mail over SMTP with nodemailer. `smtpUrl` is e.g. `smtps://user:pass@mail.example.org:465` (credentials are in
 * the URL, which comes from the environment or a file, never the command line, and is never logged).
 */
export const SmtpMailer = (options: { readonly smtpUrl: string; readonly from: string }) =>
  Layer.effect(
    Mailer,
    Effect.acquireRelease(
      Effect.sync(() => nodemailer.createTransport(options.smtpUrl)),
      (transport) => Effect.sync(() => transport.close())
    ).pipe(Effect.map((transport) =>
      Mailer.of({
        transport: "smtp",
        send: (message) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text }),
            catch: () => new MailUnavailable()
          }).pipe(
            Effect.tapError(() => Effect.logWarning("smtp send failed")),
            Effect.asVoid
          )
      })
    ))
  )
