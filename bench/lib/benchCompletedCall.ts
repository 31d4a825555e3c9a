/**
 * One completed, idempotent chat call as the relay's settlement submits it (layers/pg/Settlement.ts): its receipt
 * input, its metering and its stored answer. The settlement benchmarks (bench/settle.ts through the ReceiptSealer,
 * bench/settleStatement.ts straight to the statement) settle these, so both measure the same work per call.
 */
import { createHash } from "node:crypto"
import type { MeteredCall, SealInput } from "../../services/ReceiptSealer.ts"

export const benchCompletedCall = (i: number, orgId: string, holdId: string): { readonly seal: SealInput; readonly metered: MeteredCall } => {
  const body = new TextEncoder().encode(`{"id":"chatcmpl-${i}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."}}]}`)
  return {
    seal: {
      orgId,
      accountId: `acct_${orgId}`,
      keyId: "key_bench",
      keyPrefix: "svc_bench",
      requestId: crypto.randomUUID(),
      providerResponseId: `chatcmpl-${i}`,
      provider: "local",
      model: "local-chat",
      capability: "chat.completions",
      inputTokens: 12,
      outputTokens: 34,
      hashUpstreamRequest: createHash("sha256").update(`q${i}`).digest("hex"),
      hashUpstreamResponse: createHash("sha256").update(`a${i}`).digest("hex"),
      engineVersion: "relay-ts/0.1.0"
    },
    metered: {
      holdId,
      billedMicros: 10n,
      ledgerReference: `local/local-chat chatcmpl-${i}`,
      lowBalanceDefaultMicros: 1_000_000n,
      usage: {
        id: `use_${crypto.randomUUID().replaceAll("-", "")}`,
        request_id: `chatcmpl-${i}`,
        gateway_request_id: crypto.randomUUID(),
        org_id: orgId,
        parent_org_id: null,
        key_id: "key_bench",
        provider: "local",
        model: "local-chat",
        capability: "chat.completions",
        key_mode: "pooled",
        input_tokens: 12,
        output_tokens: 34,
        estimated: false,
        partial: false,
        upstream_cost_micros: "8",
        billed_micros: "10",
        markup_micros: "2",
        trace_id: "0".repeat(32),
        started_at: new Date().toISOString()
      },
      response: {
        scope: `${orgId}|chat.completions`,
        key: crypto.randomUUID(),
        bodyHash: createHash("sha256").update(`q${i}`).digest("hex"),
        render: async (receipt) => ({
          status: 200,
          headers: {
            "content-type": "application/json",
            ...(receipt === undefined ? {} : { "x-service-receipt-v2": Buffer.from(JSON.stringify(receipt.v2)).toString("base64") })
          },
          body,
          streamed: false
        })
      }
    }
  }
}
