/**
 * One completed, idempotent chat call as the relay's settlement submits it (layers/pg/Settlement.ts): its receipt
 * input, its metering and its stored answer. The settlement benchmarks (bench/settle.ts through the ReceiptSealer,
 * bench/settleStatement.ts straight to the statement) settle these, so both measure the same work per call. The
 * receipt input and the metering are the tests' (test/support/receipts.ts); the stored answer is what makes the call
 * idempotent, the part the tests' sealing pipeline does not need.
 */
import { createHash } from "node:crypto"
import type { MeteredCall, SealInput } from "../../services/ReceiptSealer.ts"
import { meteredCall, sealInput } from "../../test/support/receipts.ts"

export const benchCompletedCall = (i: number, orgId: string, holdId: string): { readonly seal: SealInput; readonly metered: MeteredCall } => {
  const body = new TextEncoder().encode(`{"id":"chatcmpl-${i}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."}}]}`)
  return {
    seal: sealInput(orgId, { providerResponseId: `chatcmpl-${i}` }),
    metered: {
      ...meteredCall(orgId, holdId, `use_bench_${i}_${crypto.randomUUID().slice(0, 8)}`),
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
