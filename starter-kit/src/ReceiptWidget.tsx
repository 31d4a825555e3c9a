/**
 * The signed receipt of one answer: what the gateway says happened (provider, model, tokens, chain position, time),
 * its list cost from the model catalogue, and a badge computed here, in the browser, with WebCrypto: the receipt's
 * signature and fields checked against the gateway's published keys (JWKS) by the SDK's verifyReceipt, each check
 * listed as the gateway's verify endpoint lists them.
 */
import { useEffect, useState } from "react"
import type { Engine } from "./engine.ts"
import type { ModelEntry } from "./models.ts"

type Verification = Awaited<ReturnType<Engine["sdk"]["verifyReceipt"]>>

const usd = (micros: number) => `$${(micros / 1_000_000).toFixed(6)}`

export const ReceiptWidget = (props: { readonly receipt: Record<string, unknown>; readonly engine: Engine | undefined; readonly models: ReadonlyArray<ModelEntry> }) => {
  const { receipt, engine } = props
  const [verification, setVerification] = useState<Verification | "checking" | { readonly error: string }>("checking")
  useEffect(() => {
    if (engine === undefined) return
    let live = true
    engine.sdk.verifyReceipt(receipt, { jwks: engine.jwks }).then(
      (result) => live && setVerification(result),
      (error: Error) => live && setVerification({ error: `the gateway's keys could not be fetched (${error.message})` })
    )
    return () => {
      live = false
    }
  }, [receipt, engine])

  const model = props.models.find((m) => m.provider === receipt.provider && (m.id === receipt.model || m.id === `${m.provider}/${String(receipt.model)}`))
  const inputTokens = Number(receipt.input_tokens ?? 0)
  const outputTokens = Number(receipt.output_tokens ?? 0)
  const cost = model === undefined ? undefined : Number(model.input_usd_per_mtok) * inputTokens + Number(model.output_usd_per_mtok) * outputTokens
  const chain = receipt.chain as { seq?: number } | undefined
  const verdict = verification === "checking" ? "checking" : "error" in verification ? "unknown" : verification.valid ? "verified" : "failed"
  const badge = { checking: "Checking receipt…", unknown: "Receipt not checked", verified: "Receipt verified", failed: "Receipt FAILED" }[verdict]

  return (
    <section className="receipt" aria-label="Receipt">
      <p className={`badge badge-${verdict}`} data-verdict={verdict} role="status">
        {badge}
      </p>
      <dl>
        <dt>Provider</dt>
        <dd>{String(receipt.provider)}</dd>
        <dt>Model</dt>
        <dd>{String(receipt.model)}</dd>
        <dt>Tokens</dt>
        <dd>{inputTokens} in, {outputTokens} out</dd>
        <dt>Cost</dt>
        <dd>{cost === undefined ? "unknown" : `${usd(cost)} at list price`}</dd>
        <dt>Chain seq</dt>
        <dd>{chain?.seq ?? "?"}</dd>
        <dt>Time</dt>
        <dd>{String(receipt.timestamp ?? "")}</dd>
      </dl>
      <details>
        <summary>Checks</summary>
        {verification !== "checking" && "error" in verification ? <p>Not checked: {verification.error}</p> : null}
        {verification !== "checking" && "checks" in verification ? (
          <ul className="checks">
            {verification.checks.map((check) => (
              <li key={check.label} data-status={check.status}>
                {check.status === "ok" ? "✓" : check.status === "fail" ? "✗" : "–"} {check.label}: {check.status}
                {check.detail ? ` (${check.detail})` : ""}
              </li>
            ))}
          </ul>
        ) : null}
      </details>
    </section>
  )
}
