// The official `openai` package, unmodified, made private: pass `client.fetch` as its fetch. Its requests are
// tokenised and attested here and sent to your gateway with your gateway key; its own apiKey and baseURL are not
// used (the placeholders below never leave this process).
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/openai-drop-in.ts
import OpenAI from "openai"
import { RelayClient } from "@privacy-relay/sdk"

const relay = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const openai = new OpenAI({ apiKey: "unused", baseURL: "https://relay.invalid/v1", fetch: relay.fetch })

const completion = await openai.chat.completions.create({
  model: process.env.MODEL ?? "local-chat",
  messages: [{ role: "user", content: "Refund IBAN GB82 WEST 1234 5698 7654 32 today." }]
})
console.log("answer:", completion.choices[0].message.content)

const stream = await openai.chat.completions.create({
  model: process.env.MODEL ?? "local-chat",
  stream: true,
  messages: [{ role: "user", content: "Write to maria.lopez@example.org." }]
})
process.stdout.write("streamed: ")
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "")
process.stdout.write("\n")
