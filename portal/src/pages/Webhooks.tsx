/** @jsxImportSource preact */
// Webhook endpoints (events, secret shown once, rotate, test, resume, delete) and the delivery log (status,
// attempts, detail with payload and last error, replay).
import type { GatewayResponse, GatewaySchemas } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { EVENT_CATALOGUE } from "../../../src/webhooks/events.ts"
import { type Account, can, rest } from "../api.ts"
import { ConfirmButton, Empty, ErrorNotice, Loading, Notice, ShownOnce, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { dateTime } from "../format.ts"
import { navigate, onLinkClick } from "../router.ts"

type Endpoint = GatewaySchemas["WebhookEndpoint"]
type Delivery = GatewaySchemas["WebhookDelivery"]
type DeliveryDetailView = GatewayResponse<"getWebhookDelivery">

const STATUSES = ["pending", "retrying", "delivered", "dead"] as const

export const Webhooks = ({ me }: { me: Account }) => {
  useTitle("Webhooks")
  const manage = can(me, "webhooks.manage")
  const [endpoints, reloadEndpoints] = useLoad(() => rest.webhooks.endpoints.list() as Promise<{ endpoints: ReadonlyArray<Endpoint> }>)
  const [status, setStatus] = useState("")
  const [deliveries, reloadDeliveries] = useLoad(
    () => rest.webhooks.deliveries.list({ limit: 50, ...(status === "" ? {} : { status }) }) as Promise<{ deliveries: ReadonlyArray<Delivery> }>,
    [status]
  )
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const changed = () => {
    reloadEndpoints()
    reloadDeliveries()
  }
  return (
    <section>
      <h1>Webhooks</h1>
      {secret !== undefined
        ? (
          <ShownOnce label={secret.label} value={secret.value}>
            <p>Verify each delivery's signature with this secret (the SDK's <code>verifyWebhook</code>).</p>
          </ShownOnce>
        )
        : null}
      {message !== undefined ? <Notice>{message}</Notice> : null}
      {manage ? <CreateEndpoint onCreated={(e) => { setSecret({ label: `Signing secret for ${e.url}`, value: e.secret }); changed() }} /> : null}
      <h2>Endpoints</h2>
      {endpoints.state === "loading" ? <Loading what="endpoints" /> : null}
      {endpoints.state === "error" ? <ErrorNotice error={endpoints.error} onRetry={reloadEndpoints} /> : null}
      {endpoints.state === "ready" && endpoints.data.endpoints.length === 0 ? <Empty><p>No endpoints yet. Add one to receive events such as <code>receipt.signed</code>.</p></Empty> : null}
      {endpoints.state === "ready" && endpoints.data.endpoints.length > 0
        ? (
          <ul class="cards">
            {endpoints.data.endpoints.map((e) => (
              <EndpointCard key={e.id} endpoint={e} manage={manage} onSecret={(value) => setSecret({ label: `New signing secret for ${e.url}`, value })} onMessage={setMessage} onChanged={changed} />
            ))}
          </ul>
        )
        : null}
      <h2>Deliveries</h2>
      <form class="filters" aria-label="Filter deliveries" onSubmit={(e) => e.preventDefault()}>
        <label>Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">All</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <button type="button" onClick={reloadDeliveries}>Refresh</button>
      </form>
      {deliveries.state === "loading" ? <Loading what="deliveries" /> : null}
      {deliveries.state === "error" ? <ErrorNotice error={deliveries.error} onRetry={reloadDeliveries} /> : null}
      {deliveries.state === "ready" && deliveries.data.deliveries.length === 0 ? <Empty><p>No deliveries{status === "" ? " yet" : ` with status ${status}`}.</p></Empty> : null}
      {deliveries.state === "ready" && deliveries.data.deliveries.length > 0
        ? (
          <TableWrap label="Deliveries">
            <table>
              <thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {deliveries.data.deliveries.map((d) => (
                  <tr key={d.id} data-testid="delivery-row" data-event={d.event}>
                    <td><a href={`/portal/webhooks/deliveries/${d.id}`} onClick={onLinkClick(`/webhooks/deliveries/${d.id}`)}>#{d.id}</a>{d.replay_of !== null ? <span class="muted small"> replay of #{d.replay_of}</span> : null}</td>
                    <td><code>{d.event}</code></td>
                    <td>#{d.endpoint_id}</td>
                    <td><span class={`badge ${d.status}`}>{d.status}</span></td>
                    <td>{d.attempt_count}</td>
                    <td>{d.last_http_code ?? (d.last_error === null ? "—" : "error")}</td>
                    <td>{dateTime(d.created_at)}</td>
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

const CreateEndpoint = ({ onCreated }: { onCreated: (e: Endpoint & { secret: string }) => void }) => {
  const [url, setUrl] = useState("")
  const [events, setEvents] = useState<ReadonlyArray<string>>(["*"])
  const action = useAction()
  const toggle = (name: string) => setEvents(events.includes(name) ? events.filter((e) => e !== name) : [...events.filter((e) => e !== "*" || name === "*"), name])
  const submit = async (event: Event) => {
    event.preventDefault()
    const created = await action.run(() => rest.webhooks.endpoints.create({ url: url.trim(), events: events.includes("*") ? ["*"] : [...events] }))
    if (created !== undefined) {
      setUrl("")
      onCreated(created as Endpoint & { secret: string })
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-endpoint-title">
      <h2 id="create-endpoint-title">Add an endpoint</h2>
      <label>URL <span class="muted small">(https)</span><input type="url" name="url" required placeholder="https://example.com/hooks/privacy-relay" value={url} onInput={(e) => setUrl(e.currentTarget.value)} /></label>
      <fieldset>
        <legend>Events</legend>
        <label class="check"><input type="checkbox" name="event" value="*" checked={events.includes("*")} onChange={() => setEvents(events.includes("*") ? [] : ["*"])} /><span>All events</span></label>
        {events.includes("*") ? null : (
          <div class="columns">
            {EVENT_CATALOGUE.map((name) => (
              <label class="check" key={name}><input type="checkbox" name="event" value={name} checked={events.includes(name)} onChange={() => toggle(name)} /><span><code>{name}</code></span></label>
            ))}
          </div>
        )}
      </fieldset>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      <button class="primary" type="submit" disabled={action.busy || events.length === 0}>{action.busy ? "Adding…" : "Add endpoint"}</button>
    </form>
  )
}

const EndpointCard = (props: { endpoint: Endpoint; manage: boolean; onSecret: (secret: string) => void; onMessage: (m: string) => void; onChanged: () => void }) => {
  const e = props.endpoint
  const action = useAction()
  return (
    <li class="card" data-testid="endpoint">
      <p class="wrap"><strong>{e.url}</strong> <span class={`badge ${e.status}`}>{e.status}</span></p>
      {e.status === "paused" ? <p class="muted">Paused: {e.paused_reason ?? "after repeated failures"}. Deliveries wait until you resume it.</p> : null}
      <p class="muted small">Events: {e.events.map((x) => <code key={x}>{x} </code>)} · created {dateTime(e.created_at)}</p>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      {props.manage
        ? (
          <div class="row-actions">
            <button type="button" disabled={action.busy} onClick={async () => {
              if ((await action.run(() => rest.webhooks.endpoints.test(e.id))) !== undefined) {
                props.onMessage(`A webhook.test event is on its way to ${e.url}.`)
                props.onChanged()
              }
            }}>Send test</button>
            {e.status === "paused"
              ? <button type="button" disabled={action.busy} onClick={async () => { if ((await action.run(() => rest.webhooks.endpoints.resume(e.id))) !== undefined) props.onChanged() }}>Resume</button>
              : null}
            <ConfirmButton label="Rotate secret" title="Rotate the signing secret?" confirmLabel="Rotate secret" onConfirm={async () => {
              const rotated = await action.run(() => rest.webhooks.endpoints.rotateSecret(e.id)) as { secret: string } | undefined
              if (rotated !== undefined) props.onSecret(rotated.secret)
            }}>
              <p>The current secret stops working immediately: deliveries from now on are signed with the new one. Update your receiver at once.</p>
            </ConfirmButton>
            <ConfirmButton label="Delete" danger title="Delete this endpoint?" confirmLabel="Delete endpoint" onConfirm={async () => {
              if ((await action.run(() => rest.webhooks.endpoints.delete(e.id))) !== undefined) props.onChanged()
            }}>
              <p>No more events go to <code class="wrap">{e.url}</code>.</p>
            </ConfirmButton>
          </div>
        )
        : null}
    </li>
  )
}

export const DeliveryDetail = ({ me, id }: { me: Account; id: string }) => {
  useTitle(`Delivery #${id}`)
  const [detail, reload] = useLoad(() => rest.webhooks.deliveries.get(id) as Promise<DeliveryDetailView>, [id])
  const replay = useAction()
  return (
    <section>
      <p><a href="/portal/webhooks" onClick={onLinkClick("/webhooks")}>← Webhooks</a></p>
      <h1>Delivery #{id}</h1>
      {detail.state === "loading" ? <Loading what="the delivery" /> : null}
      {detail.state === "error" ? <ErrorNotice error={detail.error} onRetry={reload} /> : null}
      {detail.state === "ready"
        ? (
          <>
            <dl class="facts">
              <dt>Event</dt><dd><code>{detail.data.event}</code></dd>
              <dt>Status</dt><dd><span class={`badge ${detail.data.status}`} data-testid="delivery-status">{detail.data.status}</span></dd>
              <dt>Attempts</dt><dd>{detail.data.attempt_count}</dd>
              <dt>Last error</dt><dd>{detail.data.last_error ?? "none"}</dd>
              <dt>Next attempt</dt><dd>{dateTime(detail.data.next_attempt_at)}</dd>
              {detail.data.replay_of !== null ? <><dt>Replay of</dt><dd>#{detail.data.replay_of}</dd></> : null}
            </dl>
            {can(me, "webhooks.manage")
              ? (
                <p>
                  <button type="button" disabled={replay.busy} onClick={async () => {
                    const again = await replay.run(() => rest.webhooks.deliveries.replay(id)) as { id: number } | undefined
                    if (again !== undefined) navigate(`/webhooks/deliveries/${again.id}`)
                  }}>Replay this delivery</button>
                </p>
              )
              : null}
            {replay.error !== undefined ? <ErrorNotice error={replay.error} /> : null}
            <h2>Attempts</h2>
            {detail.data.attempts.length === 0 ? <Empty><p>Not attempted yet.</p></Empty> : (
              <TableWrap label="Attempts">
                <table>
                  <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col">HTTP</th><th scope="col">Error</th><th scope="col">Duration</th></tr></thead>
                  <tbody>
                    {detail.data.attempts.map((a) => (
                      <tr key={a.id}><td>{a.attempt}</td><td>{dateTime(a.started_at)}</td><td>{a.http_code ?? "—"}</td><td>{a.error ?? "—"}</td><td>{a.duration_ms === null ? "—" : `${a.duration_ms} ms`}</td></tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            <h2>Payload</h2>
            <pre class="json" tabIndex={0} aria-label="Payload">{JSON.stringify(detail.data.payload, null, 2)}</pre>
          </>
        )
        : null}
    </section>
  )
}
