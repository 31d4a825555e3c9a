// aliases.json: the alias formats and how tags are derived, tokenisation with fixed secrets (names off), and
// detokenisation of streams whose chunk boundaries cut aliases (the output after each push and at flush).
import { ALIAS_PATTERN, REQUEST_TAG_LENGTH, STABLE_TAG_LENGTH, tagFromMac } from "../../typescript/src/tokeniser/alias.ts"
import { detokenise } from "../../typescript/src/tokeniser/detokenise.ts"
import { createSession } from "../../typescript/src/tokeniser/session.ts"
import { createStreamingDetokeniser } from "../../typescript/src/tokeniser/streamingDetokeniser.ts"
import { tokeniseText } from "../../typescript/src/tokeniser/tokeniseText.ts"
import { bytesToHex, hexToBytes } from "../../typescript/src/wire/crypto/hex.ts"

const REQUEST_SECRET_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
const STABLE_SECRET_HEX = "f0e0d0c0b0a090807060504030201000ffeeddccbbaa99887766554433221100"

const hmacHex = async (secretHex: string, message: string) => {
  const key = await globalThis.crypto.subtle.importKey("raw", hexToBytes(secretHex) as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  return bytesToHex(new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message))))
}

const TEXTS = [
  "Email jane.doe@example.com and jane.doe@example.com again, or call +44 20 7946 0958.",
  "IBAN NL91ABNA0417164300 for Jean Dupont; backup contact ops@example.org.",
  "Literal <EMAIL_1> and <EMAIL_1_abcd> typed by the user stay text; the address is bob@example.net."
]

const isAlias = (text: string) => new RegExp(`^${ALIAS_PATTERN.source}$`).test(text)

/** Runs a streaming detokeniser over chunks, recording every output. */
const stream = (map: ReadonlyMap<string, string>, chunks: ReadonlyArray<string>) => {
  const detokeniser = createStreamingDetokeniser(map)
  const outputs = chunks.map((chunk) => detokeniser.push(chunk))
  const flush = detokeniser.flush()
  const whole = chunks.join("")
  if (outputs.join("") + flush !== detokenise(whole, map)) throw new Error("streaming and whole-text detokenisation disagree")
  return { chunks, outputs, flush, joined: outputs.join("") + flush }
}

export const buildAliasVectors = async () => {
  const requestSecret = hexToBytes(REQUEST_SECRET_HEX)
  const tokenised = []
  for (const text of TEXTS) {
    const session = createSession({ names: "off", secret: requestSecret })
    const output = await tokeniseText(text, session)
    tokenised.push({ text, output, map: [...session.map], detectors_fired: { ...session.detectorsFired } })
  }
  const stable = []
  for (const text of TEXTS.slice(0, 2)) {
    const session = createSession({ names: "off", secret: requestSecret, stableAliasSecret: hexToBytes(STABLE_SECRET_HEX) })
    const output = await tokeniseText(text, session)
    stable.push({ text, output, map: [...session.map] })
  }

  const map = new Map(tokenised[0]!.map)
  const [email, phone] = [...map.keys()] as [string, string]
  const answer = `Done: wrote to ${email}, then called ${phone}.`
  const cut = answer.indexOf(email) + 4
  const streams = [
    { name: "alias cut in the middle", ...stream(map, [answer.slice(0, cut), answer.slice(cut)]) },
    { name: "one character per chunk", ...stream(map, [...answer]) },
    { name: "two aliases back to back across chunks", ...stream(map, [`${email}${phone.slice(0, 3)}`, phone.slice(3), "!"]) },
    { name: "a '<' that starts no alias is released at once", ...stream(map, ["a <", " b <c", "> done"]) },
    { name: "an alias-shaped token not in the map is left as is", ...stream(map, ["see <EMAIL_9_", "zzzz> ok"]) },
    { name: "stream cut mid-alias: flush releases the prefix unchanged", ...stream(map, ["bye ", email.slice(0, 6)]) },
    { name: "empty chunks", ...stream(map, ["", email, "", ""]) }
  ]

  const perRequestTags = []
  for (const [type, index, attempt] of [["EMAIL", 1, 0], ["PHONE", 1, 0], ["EMAIL", 2, 0], ["EMAIL", 1, 1]] as const) {
    const message = `${type}_${index}#${attempt}`
    const mac = await hmacHex(REQUEST_SECRET_HEX, message)
    perRequestTags.push({ type, index, attempt, message, hmac_sha256: mac, tag: tagFromMac(hexToBytes(mac)), alias: `<${type}_${index}_${tagFromMac(hexToBytes(mac))}>` })
  }
  const stableTags = []
  for (const [type, value] of [["EMAIL", "jane.doe@example.com"], ["PERSON", "Jean Dupont"]] as const) {
    const message = `${type}\u0000${value}`
    const mac = await hmacHex(STABLE_SECRET_HEX, message)
    const tag = tagFromMac(hexToBytes(mac), STABLE_TAG_LENGTH)
    stableTags.push({ type, value, message, hmac_sha256: mac, tag, alias: `<${type}_${tag}>` })
  }

  return {
    description:
      "Aliases. Per-request alias `<TYPE_N_tag>`: N numbers values of a type in order of first appearance in one request; tag = the first 4 bytes of HMAC-SHA256(request secret, \"TYPE_N#attempt\") each mapped by (byte & 31) into `tag_alphabet` (attempt 0, or the next attempt when the alias already occurs in the request's text). Stable alias `<TYPE_tag10>`: 10 characters from HMAC-SHA256(stable secret, \"TYPE\\u0000value\"). `tokenise`: tokenise `text` with names off and the given secrets; expect `output` and `map` ([alias, original] in order of creation). `streams`: feed `chunks` to a streaming detokeniser with `map`; `outputs[i]` is what push i returns, `flush` what flush returns. A streaming detokeniser holds back only text from the last '<' that is a proper prefix of an alias in the map.",
    version: 1,
    pattern: ALIAS_PATTERN.source,
    tag_alphabet: "abcdefghijkmnpqrstuvwxyz23456789",
    request_tag_length: REQUEST_TAG_LENGTH,
    stable_tag_length: STABLE_TAG_LENGTH,
    request_secret_hex: REQUEST_SECRET_HEX,
    stable_secret_hex: STABLE_SECRET_HEX,
    tags: { per_request: perRequestTags, stable: stableTags },
    is_alias: ["<EMAIL_1_k3f9>", "<PERSON_12_ab2c>", "<EMAIL_k3f9m2qd7x>", "<EMAIL_1>", "<EMAIL_1_K3F9>", "<EMAIL_1_l3f9>", "<email_1_k3f9>", "<EMAIL_1_k3f9m>", "EMAIL_1_k3f9"].map(
      (text) => ({ text, alias: isAlias(text) })
    ),
    tokenise: tokenised,
    tokenise_stable: stable,
    streams: streams.map((s) => ({ ...s, map: [...map] }))
  }
}
