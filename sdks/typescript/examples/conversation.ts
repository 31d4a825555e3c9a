// A multi-turn Responses conversation whose history and aliases stay on this device: each turn is sent with the
// earlier ones (tokenised again, the same value under the same alias), nothing is stored at the provider.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/conversation.ts
import { RelayClient } from "@privacy-relay/sdk"

const client = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const model = process.env.MODEL ?? "local-chat"
const conversation = client.conversations.create()
// The text of a Response's message items (the openai package's `output_text`).
const textOf = (response: unknown) =>
  ((response as { output?: Array<any> }).output ?? []).flatMap((item) => (item.type === "message" ? item.content : [])).map((part: any) => part.text ?? "").join("")

const first = await conversation.responses.create({ model, input: "My name is Dr. Ada Lovelace, write to ada@example.org." })
console.log("turn 1:", textOf(first))

const stream = await conversation.responses.create({ model, input: "Send the invoice to ada@example.org.", stream: true })
process.stdout.write("turn 2: ")
for await (const event of stream) if (event.type === "response.output_text.delta") process.stdout.write(event.delta)
process.stdout.write("\n")

console.log("turns kept on this device:", conversation.items.length, "aliases:", conversation.aliases.size)
console.log("what left this device on turn 2:", JSON.stringify(stream.tokenisedRequest))
