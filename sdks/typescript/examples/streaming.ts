// Streaming: chunks arrive with the originals already restored (an alias cut across two chunks is held back only
// until it is complete); the receipt from the stream's trailer is verified once the stream ends.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/streaming.ts
import { RelayClient } from "@privacy-relay/sdk"

const client = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const stream = await client.chat.completions.create({
  model: process.env.MODEL ?? "local-chat",
  stream: true,
  messages: [{ role: "user", content: "Call +44 20 7946 0958 and ask for Dr. Ada Lovelace." }]
})
process.stdout.write("answer: ")
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "")
process.stdout.write("\n")
console.log("what left this device:", JSON.stringify(stream.tokenisedRequest))
console.log("request id:", stream.requestId, "receipt verified:", stream.receiptVerified)
