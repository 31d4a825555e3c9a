/**
 * `node bench/proxyStages.ts`: what each in-process stage of one local-proxy call costs on the calling thread, in
 * microseconds per call (a "Say hello." chat completion with the built-in name model): the tokeniser, the
 * attestation, the whole prepareCall, the answer's restoration. Each stage is run in a tight loop after a warm-up,
 * so the figures are CPU time of the stage alone (no I/O); the HTTP legs are measured by `npm run bench:proxy-cpu`.
 */
import { nodeAttestationSigning } from "../sdks/typescript/src/client/nodeAttestationSigning.ts"
import { ENGINE } from "../sdks/typescript/src/client/engine.ts"
import { type Engine, prepareCall } from "../sdks/typescript/src/engine.ts"
import { inProcessTokeniser } from "../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { inlineFiles } from "../sdks/typescript/src/files/inlineFiles.ts"
import { restoredAnswer, restoredText } from "../sdks/typescript/src/relayExchange.ts"
import { builtinNameModel, loadBuiltinNameModel, tokeniseRequest } from "../sdks/typescript/src/tokeniser/index.ts"
import { buildAttestation, encodeAttestationHeader } from "../sdks/typescript/src/wire/attestation/v3.ts"
import { signingInput } from "../sdks/typescript/src/wire/receipts/signing-input.ts"

await loadBuiltinNameModel()
const keyPair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair
const body = () => JSON.parse(JSON.stringify({ model: "local-chat", stream: false, messages: [{ role: "user", content: "Say hello." }] }))
// The same turn with personal data in it: aliases minted (HMAC) and restored in the answer.
const personal = () => JSON.parse(JSON.stringify({ model: "local-chat", stream: false, messages: [{ role: "user", content: "Write to Margaret Hamilton at margaret.hamilton@example.com, +44 20 7946 0958." }] }))
// A 40-turn conversation (~24 KB, no personal data): what an agent resends on every call.
const conversation = () => JSON.parse(JSON.stringify({ model: "m", messages: Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: "Lorem ipsum ".repeat(50) + i }] })) }))
const tokeniserOff = inProcessTokeniser("off", { identifierSecret: new Uint8Array(32) })
const tokeniser = inProcessTokeniser(builtinNameModel, { identifierSecret: new Uint8Array(32) })
const engine: Engine = {
  identity: ENGINE, deviceKey: async () => keyPair, names: "off", stableAliasSecret: undefined, attestationSigning: nodeAttestationSigning,
  tokenise: (route, b, signal, secret) => tokeniser.tokenise(route, b, signal ?? new AbortController().signal, secret)
}
const tokenised = await tokeniseRequest("chat.completions", body(), { names: builtinNameModel })
const envelope = await buildAttestation({ route: "chat.completions", bodyBytes: tokenised.bodyBytes, detectorsFired: {}, engine: ENGINE, keyPair, bodyIsCanonical: true, signing: nodeAttestationSigning })
const personalTokenised = await tokeniseRequest("chat.completions", personal(), { names: builtinNameModel })
const personalAnswer = JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: `Echo: ${(personalTokenised.body as { messages: Array<{ content: string }> }).messages[0]!.content}` }, finish_reason: "stop" }] })
const answerText = JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "local-chat", choices: [{ index: 0, message: { role: "assistant", content: "Echo: Say hello." }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })

const stages: Record<string, () => unknown> = {
  "tokeniseRequest (names off)": () => tokeniseRequest("chat.completions", body(), { names: "off" }),
  "tokeniseRequest (built-in names)": () => tokeniseRequest("chat.completions", body(), { names: builtinNameModel }),
  "inProcessTokeniser.tokenise (built-in)": () => tokeniser.tokenise("chat.completions", body(), new AbortController().signal),
  "inlineFiles": () => inlineFiles("chat.completions", body(), {}),
  "buildAttestation": () => buildAttestation({ route: "chat.completions", bodyBytes: tokenised.bodyBytes, detectorsFired: {}, engine: ENGINE, keyPair, bodyIsCanonical: true, signing: nodeAttestationSigning }),
  "signingInput (envelope JCS)": () => signingInput(envelope),
  "signEs256": () => nodeAttestationSigning.signEs256(keyPair.privateKey, tokenised.bodyBytes),
  "encodeAttestationHeader": () => encodeAttestationHeader(envelope),
  "prepareCall (built-in names)": () => prepareCall(engine, "chat.completions", body()),
  "prepareCall, personal data (built-in names)": () => prepareCall(engine, "chat.completions", personal()),
  "inProcessTokeniser.tokenise, 40-turn conversation (names off)": () => tokeniserOff.tokenise("chat.completions", conversation(), new AbortController().signal),
  "restoredText (proxy; no aliases)": () => restoredText(answerText, tokenised.map),
  "restoredText (proxy; 3 aliases)": () => restoredText(personalAnswer, personalTokenised.map),
  "restoredAnswer + text": async () => (await restoredAnswer("chat.completions", tokenised.map, new Response(answerText, { status: 200, headers: { "content-type": "application/json" } }), false)).text()
}
const only = process.argv[2]
for (const [name, run] of Object.entries(stages)) {
  if (only !== undefined && !name.includes(only)) continue
  for (let i = 0; i < 2000; i++) await run()
  const n = 5000
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < n; i++) await run()
  const cpu = process.cpuUsage(cpu0)
  process.stdout.write(`${name.padEnd(36)} ${(((cpu.user + cpu.system) / n)).toFixed(1)} us CPU/call\n`)
}
