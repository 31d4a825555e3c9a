/** @jsxImportSource preact */
// The portal's shell: who is signed in, the navigation, and which page a path shows.
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { type Account, account, describeError } from "./api.ts"
import { ErrorNotice, Loading } from "./components/ui.tsx"
import { Admin } from "./pages/Admin.tsx"
import { SignIn, SignUp, Verify } from "./pages/Auth.tsx"
import { Billing } from "./pages/Billing.tsx"
import { Keys } from "./pages/Keys.tsx"
import { Organisations } from "./pages/Organisations.tsx"
import { Overview } from "./pages/Overview.tsx"
import { ProviderKeys } from "./pages/ProviderKeys.tsx"
import { ReceiptDetail, Receipts } from "./pages/Receipts.tsx"
import { Usage } from "./pages/Usage.tsx"
import { DeliveryDetail, Webhooks } from "./pages/Webhooks.tsx"
import { navigate, onLinkClick, usePath } from "./router.ts"
import "./styles.css"

const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/", "Overview"],
  ["/keys", "Keys"],
  ["/usage", "Usage"],
  ["/receipts", "Receipts"],
  ["/webhooks", "Webhooks"],
  ["/billing", "Billing"],
  ["/providers", "Providers"],
  ["/organisations", "Sub-organisations"]
]
/** Shown to operators only (the page itself answers anyone else with the gateway's 403). */
const OPERATOR_NAV: readonly [string, string] = ["/admin", "Admin"]

const PUBLIC_PAGES = new Set(["/sign-in", "/sign-up", "/verify"])

type Session = { state: "checking" } | { state: "signed-out" } | { state: "signed-in"; me: Account } | { state: "error"; error: unknown }

const App = () => {
  const path = usePath()
  const [session, setSession] = useState<Session>({ state: "checking" })
  const check = () =>
    account.me().then(
      (me) => setSession({ state: "signed-in", me }),
      (error) => setSession(describeError(error).signedOut ? { state: "signed-out" } : { state: "error", error })
    )
  useEffect(() => void check(), [])

  useEffect(() => {
    if (session.state === "signed-out" && !PUBLIC_PAGES.has(path)) navigate("/sign-in", { replace: true })
    if (session.state === "signed-in" && (path === "/sign-in" || path === "/sign-up")) navigate("/", { replace: true })
  }, [session.state, path])

  if (path === "/verify") return <Shell><Verify /></Shell>
  if (session.state === "checking") return <Shell><main id="main"><Loading what="your session" /></main></Shell>
  if (session.state === "error") return <Shell><main id="main"><ErrorNotice error={session.error} onRetry={check} /></main></Shell>
  if (session.state === "signed-out") {
    return <Shell>{path === "/sign-up" ? <SignUp /> : <SignIn onSignedIn={() => void check().then(() => navigate("/"))} />}</Shell>
  }
  const me = session.me
  const signOut = async () => {
    try {
      await account.signOut()
    } finally {
      setSession({ state: "signed-out" })
      navigate("/sign-in", { replace: true })
    }
  }
  return (
    <Shell me={me} path={path} onSignOut={signOut}>
      <main id="main">{page(path, me)}</main>
    </Shell>
  )
}

const page = (path: string, me: Account) => {
  if (path === "/") return <Overview me={me} />
  if (path === "/keys") return <Keys me={me} />
  if (path === "/usage") return <Usage />
  if (path === "/receipts") return <Receipts />
  if (path.startsWith("/receipts/")) return <ReceiptDetail jti={decodeURIComponent(path.slice("/receipts/".length))} />
  if (path === "/webhooks") return <Webhooks me={me} />
  if (path.startsWith("/webhooks/deliveries/")) return <DeliveryDetail me={me} id={decodeURIComponent(path.slice("/webhooks/deliveries/".length))} />
  if (path === "/billing") return <Billing me={me} />
  if (path === "/providers") return <ProviderKeys me={me} />
  if (path === "/organisations") return <Organisations me={me} />
  if (path === "/admin") return <Admin />
  return (
    <section>
      <h1>Page not found</h1>
      <p>There is no portal page at this address. <a href="/portal/" onClick={onLinkClick("/")}>Go to the overview</a>.</p>
    </section>
  )
}

const Shell = (props: { me?: Account; path?: string; onSignOut?: () => void; children: preact.ComponentChildren }) => (
  <>
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/portal/" onClick={onLinkClick("/")}>Privacy Relay</a>
      {props.me !== undefined ? (
        <div class="who">
          <span class="muted small" data-testid="signed-in-as">{props.me.email}</span>
          <button type="button" onClick={props.onSignOut}>Sign out</button>
        </div>
      ) : null}
    </header>
    {props.me !== undefined ? (
      <nav aria-label="Portal">
        <ul>
          {(props.me.abilities.includes("ability:admin") ? [...NAV, OPERATOR_NAV] : NAV).map(([to, label]) => {
            const active = props.path === to || (to !== "/" && props.path?.startsWith(`${to}/`))
            return (
              <li key={to}>
                <a href={`/portal${to === "/" ? "/" : to}`} aria-current={active ? "page" : undefined} onClick={onLinkClick(to)}>{label}</a>
              </li>
            )
          })}
        </ul>
      </nav>
    ) : null}
    {props.children}
  </>
)

render(<App />, document.getElementById("app")!)
