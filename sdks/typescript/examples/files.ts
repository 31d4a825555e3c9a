// Files: a CSV attached to a private chat completion is read and tokenised on this device (the provider gets its
// text with aliases, never the file), and the answer is rebuilt into an HTML file here with the originals.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/files.ts
import { writeFileSync } from "node:fs"
import { reconstruct, RelayClient } from "@privacy-relay/sdk"

const client = new RelayClient({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })
const csv = "name,email\nAda Lovelace,ada@example.org\nAlan Turing,alan.turing@example.org\n"
const answer = await client.chat.completions.create({
  model: process.env.MODEL ?? "local-chat",
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Format these contacts as a markdown table." },
        { type: "file", file: { filename: "contacts.csv", file_data: `data:text/csv;base64,${btoa(csv)}` } }
      ]
    }
  ]
})
const content: string = answer.choices[0].message.content
console.log("answer:", content.split("\n")[0])
console.log("what left this device:", JSON.stringify(answer.tokenisedRequest))
// The answer is already restored here; `aliases` also restores any alias left in text kept from the call.
const html = await reconstruct(content, { format: "html", filename: "contacts.html", aliases: answer.aliases })
writeFileSync("contacts.html", html)
console.log("contacts.html:", new TextDecoder().decode(html).match(/<table>[\s\S]*<\/table>/)?.[0]?.replace(/\n/g, ""))
