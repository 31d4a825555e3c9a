import { hasValidBech32Checksum } from "./bech32.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"

// Bitcoin bech32/bech32m (bc1..., checksum verified), Bitcoin base58 (1... or 3..., 26-35 base58
// characters, shape only: verifying base58check would need a synchronous SHA-256), Ethereum (0x + 40 hex;
// a 64-hex transaction hash is not an address).
const WALLET =
  /(?<![\p{L}\p{N}])(?:(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34}|0x[0-9a-fA-F]{40})(?![\p{L}\p{N}])/gu

const count = (s: string, re: RegExp): number => s.match(re)?.length ?? 0
const isBase58Like = (body: string): boolean =>
  /[a-z]/.test(body) && /[A-Z]/.test(body) && (count(body, /\d/g) >= 2 || (count(body, /[A-Z]/g) >= 6 && count(body, /[a-z]/g) >= 6))

export const cryptoWalletDetector: Detector = {
  type: "CRYPTO_WALLET",
  detect: (text) =>
    spansFromRegex(text, WALLET, "CRYPTO_WALLET", (m) => {
      const value = m[0]
      if (/^bc1/i.test(value) && !hasValidBech32Checksum(value)) return undefined
      // Base58 shape alone matches long words glued to a 1 or 3; real addresses mix both cases throughout,
      // and usually digits: two digits, or (an address with few digits) many capitals and many small letters.
      if (/^[13]/.test(value) && !isBase58Like(value.slice(1))) return undefined
      return { start: m.index, end: m.index + value.length }
    })
}
