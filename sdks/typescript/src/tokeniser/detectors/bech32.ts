/** BIP-173 / BIP-350 checksum of a bech32 or bech32m string (case-insensitive, not mixed). */
const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

const polymod = (values: ReadonlyArray<number>): number => {
  let chk = 1
  for (const v of values) {
    const top = chk >>> 25
    chk = ((chk & 0x1ffffff) << 5) ^ v
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATORS[i]!
  }
  return chk >>> 0
}

export const hasValidBech32Checksum = (address: string): boolean => {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) return false
  const a = address.toLowerCase()
  const sep = a.lastIndexOf("1")
  if (sep < 1 || sep + 7 > a.length) return false
  const hrp = a.slice(0, sep)
  const data: Array<number> = []
  for (const c of a.slice(sep + 1)) {
    const v = CHARSET.indexOf(c)
    if (v === -1) return false
    data.push(v)
  }
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)]
  const check = polymod([...expanded, ...data])
  return check === 1 || check === 0x2bc830a3
}
