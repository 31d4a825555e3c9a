// Quickstart: one private chat completion. Personal data is replaced by aliases on this device, the answer comes
// back with the originals, and the signed receipt is verified offline.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/quickstart.ts
import { RelayClient } from "@privacy-relay/sdk"

const client = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const answer = await client.chat.completions.create({
  model: process.env.MODEL ?? "local-chat",
  messages: [{ role: "user", content: "Draft a short reply to jane.doe@example.com about invoice 4411." }]
})
console.log("answer:", answer.choices[0].message.content)
console.log("what left this device:", JSON.stringify(answer.tokenisedRequest))
console.log("request id:", answer.requestId, "receipt verified:", answer.receiptVerified)
