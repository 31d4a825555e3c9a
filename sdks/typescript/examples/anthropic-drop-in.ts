// The official `@anthropic-ai/sdk` package, unmodified, made private: pass `client.fetch` as its fetch. Messages go
// through the gateway's Anthropic-format route, tokenised here; answers and streamed text come back with originals.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/anthropic-drop-in.ts
import Anthropic from "@anthropic-ai/sdk"
import { RelayClient } from "@privacy-relay/sdk"

const relay = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const anthropic = new Anthropic({ apiKey: "unused", baseURL: "https://relay.invalid", fetch: relay.fetch })
const model = process.env.MODEL ?? "local-chat"

const message = await anthropic.messages.create({
  model,
  max_tokens: 256,
  messages: [{ role: "user", content: "Summarise the ticket from jane.doe@example.com." }]
})
console.log("answer:", message.content[0].type === "text" ? message.content[0].text : message.content[0].type)

const stream = anthropic.messages.stream({ model, max_tokens: 256, messages: [{ role: "user", content: "Phone +44 20 7946 0958 back." }] })
process.stdout.write("streamed: ")
stream.on("text", (text) => process.stdout.write(text))
await stream.finalMessage()
process.stdout.write("\n")
