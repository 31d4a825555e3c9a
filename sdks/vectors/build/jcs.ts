// jcs.json: RFC 8785 canonicalisation cases, with the JSON text as input so every language parses it itself.
import { canonicalString } from "../../typescript/src/wire/crypto/jcs.ts"

const CASES: ReadonlyArray<readonly [string, string]> = [
  ["members sorted, nested objects too", `{"b":1,"a":2,"c":{"z":true,"y":null}}`],
  ["insignificant whitespace removed", ` { "a" : [ 1 , 2 , 3 ] ,\n\t"b" : "x y" } `],
  ["members sorted by UTF-16 code units (RFC 8785 section 3.2.3)", `{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}`],
  ["numbers in ECMAScript form (RFC 8785 section 3.2.2.3)", `[333333333.33333329,1E30,4.50,2e-3,0.000001,1e-7,1e21,1e20,-0,0.1,-1.5e-9,100,9007199254740991]`],
  ["string escapes: only the mandatory ones, \\u00XX lowercase hex", `["\\u0000\\u001f\\"\\\\\\/\\b\\f\\n\\r\\t\\u007f","\\u00e9\\u2028\\ud83d\\ude00","\\u00C9t\\u00E9"]`],
  ["literals, empty containers and array order kept", `[true,false,null,{},[],"",[3,1,2],{"":0}]`],
  ["a chat completions body as an engine sends it", `{"model":"local-chat","messages":[{"role":"user","content":"Email <EMAIL_1_k3f9> about the invoice"}],"stream":true,"stream_options":{"include_usage":true}}`],
  ["unicode strings kept as UTF-8, not escaped", `{"fr":"Réunion à Genève","de":"Grüße","nl":"één","es":"¿Cómo está?"}`]
]

export const buildJcs = () => ({
  description:
    "RFC 8785 (JCS) canonicalisation. Parse `input` (JSON text) with your language's JSON parser (numbers as IEEE 754 doubles), canonicalise it, and compare with `canonical` byte for byte (UTF-8). Every hash and signature in the other files is over such bytes.",
  version: 1,
  cases: CASES.map(([name, input]) => ({ name, input, canonical: canonicalString(JSON.parse(input)) }))
})
