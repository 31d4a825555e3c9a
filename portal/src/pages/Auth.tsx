/** @jsxImportSource preact */
// Sign-up, sign-in and e-mail verification: the pages a visitor sees before a session exists.
import { useEffect, useState } from "preact/hooks"
import { account } from "../api.ts"
import { ErrorNotice, Notice, useAction, useTitle } from "../components/ui.tsx"
import { navigate, onLinkClick } from "../router.ts"

const PASSWORD_MIN = 10

export const SignIn = ({ onSignedIn }: { onSignedIn: () => void }) => {
  useTitle("Sign in")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const action = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const done = await action.run(() => account.signIn({ email, password }))
    if (done !== undefined) onSignedIn()
  }
  return (
    <main id="main" class="auth">
      <h1>Sign in</h1>
      <form onSubmit={submit}>
        <label>E-mail<input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
        <label>Password<input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
        {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
        <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Signing in…" : "Sign in"}</button>
      </form>
      <p>New here? <a href="/portal/sign-up" onClick={onLinkClick("/sign-up")}>Create an account</a>.</p>
      <p>Have a verification link? <a href="/portal/verify" onClick={onLinkClick("/verify")}>Verify your e-mail</a>.</p>
    </main>
  )
}

export const SignUp = () => {
  useTitle("Create an account")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [organisation, setOrganisation] = useState("")
  const [sentTo, setSentTo] = useState<{ email: string; mailSent: boolean } | undefined>(undefined)
  const action = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const done = await action.run(() => account.signUp({ email, password, ...(organisation.trim() === "" ? {} : { organisation_name: organisation.trim() }) }))
    if (done !== undefined) setSentTo({ email, mailSent: done.verification_email_sent })
  }
  if (sentTo !== undefined) return <CheckYourMail email={sentTo.email} mailSent={sentTo.mailSent} />
  return (
    <main id="main" class="auth">
      <h1>Create an account</h1>
      <form onSubmit={submit}>
        <label>E-mail<input type="email" name="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
        <label>Password <span class="muted small">(at least {PASSWORD_MIN} characters)</span>
          <input type="password" name="password" autocomplete="new-password" required minLength={PASSWORD_MIN} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <label>Organisation name <span class="muted small">(optional)</span>
          <input type="text" name="organisation" autocomplete="organization" value={organisation} onInput={(e) => setOrganisation(e.currentTarget.value)} />
        </label>
        {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
        <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Creating…" : "Create account"}</button>
      </form>
      <p>Already have an account? <a href="/portal/sign-in" onClick={onLinkClick("/sign-in")}>Sign in</a>.</p>
    </main>
  )
}

const CheckYourMail = ({ email, mailSent }: { email: string; mailSent: boolean }) => {
  const resend = useAction()
  const [resent, setResent] = useState(false)
  return (
    <main id="main" class="auth">
      <h1>{mailSent ? "Check your e-mail" : "Account created"}</h1>
      {mailSent
        ? (
          <Notice kind="success">
            <p>We sent a verification link to <strong>{email}</strong>. Open it to verify your address; verifying adds the $2 trial credit.</p>
          </Notice>
        )
        : (
          <Notice>
            <p>Your account is created, but the verification e-mail to <strong>{email}</strong> could not be sent: the mail server is unavailable. Send the link again in a few minutes; verifying adds the $2 trial credit.</p>
          </Notice>
        )}
      <p class="muted">
        Running a development gateway without <code>SMTP_URL</code>? Mail is not sent but kept by the gateway: the
        operator prints it with <code>npm run cli -- mail outbox --to {email}</code>. Open the link, or paste it on the
        <a href="/portal/verify" onClick={onLinkClick("/verify")}> verification page</a>.
      </p>
      {resend.error !== undefined ? <ErrorNotice error={resend.error} /> : null}
      {resent ? <Notice>If the address has an unverified account, a new link is on its way.</Notice> : null}
      <button type="button" disabled={resend.busy} onClick={async () => {
        if ((await resend.run(() => account.resendVerification(email))) !== undefined) setResent(true)
      }}>Send the link again</button>
      <p><a href="/portal/sign-in" onClick={onLinkClick("/sign-in")}>Go to sign-in</a></p>
    </main>
  )
}

/** Accepts the link's token from the address bar (`/portal/verify?token=...`) or pasted: the whole link or the token. */
const tokenOf = (text: string) => {
  const trimmed = text.trim()
  try {
    return new URL(trimmed).searchParams.get("token") ?? trimmed
  } catch {
    return trimmed
  }
}

export const Verify = () => {
  useTitle("Verify your e-mail")
  const fromUrl = new URLSearchParams(location.search).get("token") ?? ""
  const [input, setInput] = useState(fromUrl)
  const [result, setResult] = useState<{ trial_credited: boolean } | undefined>(undefined)
  const action = useAction()
  const verify = async (token: string) => {
    const done = await action.run(() => account.verify(tokenOf(token)))
    if (done !== undefined) setResult(done)
  }
  useEffect(() => {
    // A link opened from the mail verifies at once; the token then leaves the address bar (and the history).
    if (fromUrl !== "") {
      history.replaceState(null, "", "/portal/verify")
      void verify(fromUrl)
    }
  }, [])
  if (result !== undefined) {
    return (
      <main id="main" class="auth">
        <h1>E-mail verified</h1>
        <Notice kind="success">
          <p>Your address is verified.{result.trial_credited ? " The $2 trial credit is in your wallet." : ""}</p>
        </Notice>
        <button class="primary" type="button" onClick={() => navigate("/sign-in")}>Sign in</button>
      </main>
    )
  }
  return (
    <main id="main" class="auth">
      <h1>Verify your e-mail</h1>
      <form onSubmit={(e) => { e.preventDefault(); void verify(input) }}>
        <label>Verification link or token<input type="text" name="token" required value={input} onInput={(e) => setInput(e.currentTarget.value)} /></label>
        {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
        <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Verifying…" : "Verify"}</button>
      </form>
    </main>
  )
}
