// Conversion between the raw r||s ECDSA signature our envelopes carry (IEEE P1363, 64 bytes for P-256) and
// the DER SEQUENCE { INTEGER r, INTEGER s } OpenSSL produces and consumes natively.
//
// Why not node:crypto's own `dsaEncoding: "ieee-p1363"`: with OpenSSL 3 (Node 24) that option makes Node look up
// the curve order size through a legacy EC_KEY copy of the key on every call, which measured here at about
// 50-70 µs per sign or verify, i.e. it doubled the cost of a P-256 signature. Converting in JavaScript costs
// well under a microsecond.

/** Bytes of one P-256 coordinate / scalar. */
const P256_SCALAR_BYTES = 32

const derInteger = (scalar: Uint8Array): Uint8Array => {
  let start = 0
  while (start < scalar.length - 1 && scalar[start] === 0) start++
  // A set high bit would read as a negative INTEGER, so DER puts a zero byte in front.
  const pad = (scalar[start]! & 0x80) !== 0 ? 1 : 0
  const length = scalar.length - start + pad
  const out = new Uint8Array(2 + length)
  out[0] = 0x02
  out[1] = length
  out.set(scalar.subarray(start), 2 + pad)
  return out
}

/** DER form of a raw 64-byte P-256 r||s signature. Throws when `raw` is not 64 bytes. */
export const p256RawToDer = (raw: Uint8Array): Uint8Array => {
  if (raw.length !== 2 * P256_SCALAR_BYTES) throw new TypeError("a raw P-256 signature is 64 bytes")
  const r = derInteger(raw.subarray(0, P256_SCALAR_BYTES))
  const s = derInteger(raw.subarray(P256_SCALAR_BYTES))
  // At most 2 + 33 + 2 + 33 = 70 content bytes, so the short length form always applies.
  const out = new Uint8Array(2 + r.length + s.length)
  out[0] = 0x30
  out[1] = r.length + s.length
  out.set(r, 2)
  out.set(s, 2 + r.length)
  return out
}

/** Reads one DER INTEGER at `offset` into a left-padded 32-byte scalar; returns it and the next offset. */
const readScalar = (der: Uint8Array, offset: number): { readonly scalar: Uint8Array; readonly next: number } => {
  if (der[offset] !== 0x02) throw new TypeError("DER signature: expected an INTEGER")
  const length = der[offset + 1]
  if (length === undefined || length < 1 || length > P256_SCALAR_BYTES + 1 || offset + 2 + length > der.length) {
    throw new TypeError("DER signature: bad INTEGER length")
  }
  let value = der.subarray(offset + 2, offset + 2 + length)
  while (value.length > P256_SCALAR_BYTES && value[0] === 0) value = value.subarray(1)
  if (value.length > P256_SCALAR_BYTES) throw new TypeError("DER signature: INTEGER wider than 32 bytes")
  const scalar = new Uint8Array(P256_SCALAR_BYTES)
  scalar.set(value, P256_SCALAR_BYTES - value.length)
  return { scalar, next: offset + 2 + length }
}

/** Raw 64-byte r||s of a DER P-256 signature. Throws on anything but a well-formed SEQUENCE of two INTEGERs. */
export const p256DerToRaw = (der: Uint8Array): Uint8Array => {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) throw new TypeError("DER signature: bad SEQUENCE")
  const r = readScalar(der, 2)
  const s = readScalar(der, r.next)
  if (s.next !== der.length) throw new TypeError("DER signature: trailing bytes")
  const raw = new Uint8Array(2 * P256_SCALAR_BYTES)
  raw.set(r.scalar, 0)
  raw.set(s.scalar, P256_SCALAR_BYTES)
  return raw
}
