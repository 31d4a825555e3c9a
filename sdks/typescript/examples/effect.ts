// The Effect face (`@privacy-relay/sdk/effect`): the same calls as Effects, the client as a Layer, failures as
// RelayFailure values in the error channel carrying the gateway's stable code.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/effect.ts
import { Effect } from "effect"
import { chatCompletion, Relay } from "@privacy-relay/sdk/effect"

const program = Effect.gen(function*() {
  const answer = yield* chatCompletion({
    model: process.env.MODEL ?? "local-chat",
    messages: [{ role: "user", content: "Remind jane.doe@example.com of Friday's meeting." }]
  })
  console.log("answer:", answer.choices[0].message.content)
  console.log("receipt verified:", answer.receiptVerified)
  // A model that does not exist: a typed failure, handled by its code.
  const missing = yield* chatCompletion({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }).pipe(
    Effect.catchTag("RelayFailure", (failure) => Effect.succeed(`failed as expected: ${failure.status} ${failure.code}`))
  )
  console.log(missing)
})

await Effect.runPromise(
  program.pipe(Effect.provide(Relay.layer({ gatewayUrl: process.env.GATEWAY_URL!, apiKeyFile: process.env.GATEWAY_KEY_FILE! })))
)
