// The bytes every envelope signature (v1, v2, failed v2, v3) covers: the JCS bytes of the envelope
// with both `sig` and `signature` removed. One function so signers and verifiers cannot disagree.
import { canonicalBytes, canonicalString } from "../crypto/jcs.ts"

export const signingInput = (envelope: object): Uint8Array => {
  const { sig: _sig, signature: _signature, ...unsigned } = envelope as Record<string, unknown>
  return canonicalBytes(unsigned)
}

/** One top-level member of an envelope: its name and its JCS text (`"name":value`). */
type CanonicalMember = readonly [name: string, text: string]

const byName = (a: CanonicalMember, b: CanonicalMember) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
const join = (members: ReadonlyArray<CanonicalMember>) => {
  let out = "{"
  for (let i = 0; i < members.length; i++) out += (i === 0 ? "" : ",") + members[i]![1]
  return out + "}"
}

/**
 * An unsigned envelope canonicalised ONCE, member by member: `signingText` is the JCS text `signingInput` encodes, and
 * `signedText` the JCS text of the envelope with its signature members added, which is what the chain's envelope hash
 * covers (chain.ts envelopeHash). The sealer needs both per receipt; building the second from the members of the first
 * saves a whole second JCS pass. A top-level object's JCS text is its members' texts, sorted by name (UTF-16 code
 * units, which `<` compares), joined by commas; each member's text is canonicalString's. Members JSON leaves out
 * (undefined, functions, symbols) are left out, as canonicalString does. Only plain envelope objects (no toJSON at the top) are accepted.
 */
export const canonicalEnvelope = (unsigned: object) => {
  if (typeof (unsigned as { toJSON?: unknown }).toJSON === "function") throw new TypeError("an envelope must be a plain object")
  const record = unsigned as Record<string, unknown>
  const members: Array<CanonicalMember> = []
  for (const name of Object.keys(record)) {
    const value = record[name]
    if (name === "sig" || name === "signature" || value === undefined || typeof value === "function" || typeof value === "symbol") continue
    members.push([name, `${canonicalString(name)}:${canonicalString(value)}`])
  }
  members.sort(byName)
  const signingText = join(members)
  return {
    signingText,
    /** The JCS text of the envelope with these string members (its signature) added. */
    signedText: (signature: Readonly<Record<string, string>>): string => {
      const all = members.slice()
      for (const name of Object.keys(signature)) all.push([name, `${canonicalString(name)}:${canonicalString(signature[name])}`])
      return join(all.sort(byName))
    }
  }
}
