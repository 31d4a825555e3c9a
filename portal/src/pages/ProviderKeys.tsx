/** @jsxImportSource preact */
// Bring your own key: the organisation's own provider API keys. Calls to a provider with a stored key use it upstream
// and are billed with the 5% markup instead of 15% (docs/byok.md). A key is stored encrypted and never shown again:
// the page lists only its last four characters, and clears the field once the key is stored.
import type { ByokCredential, GatewayResponse } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { type Account, can, rest } from "../api.ts"
import { ConfirmButton, Empty, ErrorNotice, Loading, Notice, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { dateTime } from "../format.ts"

type Credential = GatewayResponse<"listByokKeys">["credentials"][number]

const BEDROCK = "aws-bedrock"

/** Providers that take a BYOK key, from the public catalogue: slug, how many models it opens, and whether it is BYOK only. */
const byokProviders = (catalogue: GatewayResponse<"listModels">) => {
  const providers = new Map<string, { models: number; pooled: boolean }>()
  for (const model of catalogue.data) {
    if (!model.byok) continue
    const entry = providers.get(model.provider) ?? { models: 0, pooled: false }
    providers.set(model.provider, { models: entry.models + 1, pooled: entry.pooled || model.pooled })
  }
  return [...providers.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([slug, p]) => ({ slug, ...p }))
}

export const ProviderKeys = ({ me }: { me: Account }) => {
  useTitle("Provider keys")
  const [stored, reload] = useLoad(() => rest.byok.list())
  const [catalogue] = useLoad(() => rest.catalogue({ include: "unavailable" }))
  const [message, setMessage] = useState<string | undefined>(undefined)
  const writable = can(me, "ability:byok.write")
  const removal = useAction()
  const remove = async (credential: Credential) => {
    if ((await removal.run(() => rest.byok.delete(credential.provider))) !== undefined) {
      setMessage(`The ${credential.provider} key ending ${credential.last4} was removed. Calls to ${credential.provider} use the gateway's pooled key again, where there is one.`)
      reload()
    }
  }
  return (
    <section>
      <h1>Provider keys</h1>
      <p class="muted">
        Store your own provider API key: calls to that provider then use it and are billed with a 5% markup instead of
        15%. Some providers can only be called this way. A key is stored encrypted and never shown again; only its last
        four characters are.
      </p>
      {message !== undefined ? <Notice kind="success">{message}</Notice> : null}
      {writable
        ? catalogue.state === "ready"
          ? <StoreKey providers={byokProviders(catalogue.data)} onStored={(text) => { setMessage(text); reload() }} />
          : catalogue.state === "error" ? <ErrorNotice error={catalogue.error} /> : <Loading what="the providers" />
        : <p>Your role can see which provider keys are stored but not change them.</p>}
      <h2>Stored keys</h2>
      {stored.state === "loading" ? <Loading what="provider keys" /> : null}
      {stored.state === "error" ? <ErrorNotice error={stored.error} onRetry={reload} /> : null}
      {stored.state === "ready" && stored.data.credentials.length === 0
        ? <Empty><p>No provider keys stored. Calls use the gateway's pooled keys.</p></Empty>
        : null}
      {removal.error !== undefined ? <ErrorNotice error={removal.error} /> : null}
      {stored.state === "ready" && stored.data.credentials.length > 0
        ? (
          <TableWrap label="Stored provider keys">
            <table>
              <thead><tr><th scope="col">Provider</th><th scope="col">Key</th><th scope="col">Stored</th>{writable ? <th scope="col">Actions</th> : null}</tr></thead>
              <tbody>
                {stored.data.credentials.map((c) => (
                  <tr key={c.provider} data-testid="provider-key" data-provider={c.provider}>
                    <td><code>{c.provider}</code></td>
                    <td><code>…{c.last4}</code></td>
                    <td>{dateTime(c.created_at)}</td>
                    {writable
                      ? (
                        <td>
                          <ConfirmButton label="Remove" title={`Remove the ${c.provider} key?`} confirmLabel="Remove key" danger onConfirm={() => remove(c)}>
                            <p>Calls to {c.provider} stop using the key ending {c.last4} at once. The key is deleted here; revoke it at {c.provider} too if it should no longer work anywhere.</p>
                          </ConfirmButton>
                        </td>
                      )
                      : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
        : null}
    </section>
  )
}

const StoreKey = ({ providers, onStored }: { providers: ReadonlyArray<{ slug: string; models: number; pooled: boolean }>; onStored: (message: string) => void }) => {
  const [provider, setProvider] = useState(providers[0]?.slug ?? "")
  const [awsPair, setAwsPair] = useState(false)
  const [fields, setFields] = useState<Record<string, string>>({})
  const action = useAction()
  const field = (name: string) => ({ name, value: fields[name] ?? "", onInput: (e: Event) => setFields({ ...fields, [name]: (e.currentTarget as HTMLInputElement).value }) })
  const pair = provider === BEDROCK && awsPair
  const submit = async (event: Event) => {
    event.preventDefault()
    const credential: ByokCredential = pair
      ? {
        aws_access_key_id: (fields.aws_access_key_id ?? "").trim(),
        aws_secret_access_key: (fields.aws_secret_access_key ?? "").trim(),
        region: (fields.region ?? "").trim(),
        ...((fields.aws_session_token ?? "").trim() === "" ? {} : { aws_session_token: fields.aws_session_token!.trim() })
      }
      : { api_key: (fields.api_key ?? "").trim() }
    const saved = await action.run(() => rest.byok.put(provider, credential))
    // The secret leaves the page's state as soon as the gateway has it.
    setFields({})
    if (saved !== undefined) onStored(`The ${saved.provider} key ending ${saved.last4} is stored. Calls to ${saved.provider} use it from now on.`)
  }
  if (providers.length === 0) return <p>This gateway has no provider that takes your own key.</p>
  return (
    <form class="card stacked" onSubmit={submit} aria-labelledby="store-key-title">
      <h2 id="store-key-title">Store a provider key</h2>
      <label for="byok-provider">Provider</label>
      <select id="byok-provider" name="provider" value={provider} onChange={(e) => { setProvider(e.currentTarget.value); setFields({}); action.clear() }}>
        {providers.map((p) => <option key={p.slug} value={p.slug}>{p.slug} ({p.models} model{p.models === 1 ? "" : "s"}{p.pooled ? "" : ", your key only"})</option>)}
      </select>
      {provider === BEDROCK
        ? (
          <fieldset>
            <legend>Credential</legend>
            <label class="check"><input type="radio" name="bedrock-kind" checked={!awsPair} onChange={() => setAwsPair(false)} /> Bedrock API key</label>
            <label class="check"><input type="radio" name="bedrock-kind" checked={awsPair} onChange={() => setAwsPair(true)} /> AWS access key pair (SigV4)</label>
          </fieldset>
        )
        : null}
      {pair
        ? (
          <>
            <label>Access key id<input type="text" autocomplete="off" spellcheck={false} required {...field("aws_access_key_id")} /></label>
            <label>Secret access key<input type="password" autocomplete="off" required {...field("aws_secret_access_key")} /></label>
            <label>Session token (temporary credentials only)<input type="password" autocomplete="off" {...field("aws_session_token")} /></label>
            <label>Region<input type="text" autocomplete="off" spellcheck={false} required placeholder="eu-central-1" {...field("region")} /></label>
          </>
        )
        : <label>API key<input type="password" autocomplete="off" spellcheck={false} required {...field("api_key")} /></label>}
      <p class="muted small">Stored or replaced at once; the provider checks the key on the first call that uses it.</p>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Storing…" : "Store key"}</button>
    </form>
  )
}
