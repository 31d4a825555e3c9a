// RFC 9162 (Certificate Transparency v2) Merkle tree over receipt hashes: the transparency log, with inclusion
// proofs (section 2.1.3) and consistency proofs (section 2.1.4) and their verification.
//
//   leaf hash  = SHA-256(0x00 || leaf data)          here leaf data = the 32 bytes of envelopeHash(receipt)
//   node hash  = SHA-256(0x01 || left || right)
//   MTH({})    = SHA-256("")
//   MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])) with k the largest power of two smaller than n
//
// The tree keeps every complete (perfect, aligned) subtree hash it has ever built, level by level, so
// appending costs O(log n) hashes and a root or an audit path for any tree size up to `size` costs
// O(log n) hashes too: in the RFC's recursion every left part is such a perfect aligned subtree.
// Pure WebCrypto, so the same code verifies proofs in a browser.
import { bytesToHex, hexToBytes } from "../crypto/hex.ts"

const sha256 = async (bytes: Uint8Array): Promise<Uint8Array> =>
  new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>))

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const LEAF_PREFIX = new Uint8Array([0x00])
const NODE_PREFIX = new Uint8Array([0x01])

/** SHA-256(0x00 || data): the domain-separated hash of one log entry. */
export const merkleLeafHash = (data: Uint8Array): Promise<Uint8Array> => sha256(concat(LEAF_PREFIX, data))

/** SHA-256(0x01 || left || right): an interior node. */
export const merkleNodeHash = (left: Uint8Array, right: Uint8Array): Promise<Uint8Array> =>
  sha256(concat(NODE_PREFIX, left, right))

/** The root of the empty tree, SHA-256 of no bytes. */
export const emptyTreeRoot = (): Promise<Uint8Array> => sha256(new Uint8Array(0))

/** The leaf hash of a receipt: over the 32 bytes its hex envelopeHash names. */
export const receiptLeafHash = (envelopeHashHex: string): Promise<Uint8Array> => merkleLeafHash(hexToBytes(envelopeHashHex))

/** Largest power of two strictly smaller than n (n >= 2). */
const splitPoint = (n: number): number => {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

const isPowerOfTwo = (n: number): boolean => n > 0 && (n & (n - 1)) === 0

export class MerkleTree {
  /** levels[h][i] = hash of leaves [i * 2^h, (i + 1) * 2^h), for every complete such range. */
  private readonly levels: Array<Array<Uint8Array>> = [[]]

  get size(): number {
    return this.levels[0]!.length
  }

  /** Appends a leaf hash (already domain-separated, see merkleLeafHash); returns its index. */
  async append(leafHash: Uint8Array): Promise<number> {
    if (leafHash.length !== 32) throw new TypeError("a leaf hash is 32 bytes")
    const index = this.levels[0]!.length
    this.levels[0]!.push(leafHash)
    let position = index
    let height = 0
    while (position % 2 === 1) {
      const level = this.levels[height]!
      const parent = await merkleNodeHash(level[position - 1]!, level[position]!)
      if (this.levels[height + 1] === undefined) this.levels[height + 1] = []
      this.levels[height + 1]!.push(parent)
      position = (position - 1) / 2
      height++
    }
    return index
  }

  /** The leaf hash at an index. */
  leaf(index: number): Uint8Array {
    const leaf = this.levels[0]![index]
    if (leaf === undefined) throw new RangeError(`no leaf ${index} in a tree of ${this.size}`)
    return leaf
  }

  /** MTH of the `n` leaves starting at `start`. */
  private async subtreeHash(start: number, n: number): Promise<Uint8Array> {
    if (n === 0) return emptyTreeRoot()
    if (isPowerOfTwo(n) && start % n === 0) {
      const height = Math.log2(n)
      const cached = this.levels[height]?.[start / n]
      if (cached !== undefined) return cached
    }
    const k = splitPoint(n)
    return merkleNodeHash(await this.subtreeHash(start, k), await this.subtreeHash(start + k, n - k))
  }

  private checkSize(treeSize: number): void {
    if (!Number.isSafeInteger(treeSize) || treeSize < 0 || treeSize > this.size) {
      throw new RangeError(`tree size ${treeSize} is not between 0 and ${this.size}`)
    }
  }

  /** Root hash of the tree made of the first `treeSize` leaves (default: all). */
  async rootHash(treeSize: number = this.size): Promise<Uint8Array> {
    this.checkSize(treeSize)
    return this.subtreeHash(0, treeSize)
  }

  /** RFC 9162 section 2.1.3.1 inclusion proof (audit path) of leaf `index` in the tree of `treeSize` leaves. */
  async inclusionProof(index: number, treeSize: number = this.size): Promise<Array<Uint8Array>> {
    this.checkSize(treeSize)
    if (!Number.isSafeInteger(index) || index < 0 || index >= treeSize) {
      throw new RangeError(`leaf ${index} is not in a tree of ${treeSize}`)
    }
    const path = async (m: number, start: number, n: number): Promise<Array<Uint8Array>> => {
      if (n === 1) return []
      const k = splitPoint(n)
      return m < k
        ? [...(await path(m, start, k)), await this.subtreeHash(start + k, n - k)]
        : [...(await path(m - k, start + k, n - k)), await this.subtreeHash(start, k)]
    }
    return path(index, 0, treeSize)
  }

  /**
   * RFC 9162 section 2.1.4.1 consistency proof between the trees of the first `first` and `second` leaves
   * (1 <= first <= second <= size): PROOF(m, D[n]) = SUBPROOF(m, D[n], true). Empty when first = second.
   */
  async consistencyProof(first: number, second: number = this.size): Promise<Array<Uint8Array>> {
    this.checkSize(second)
    if (!Number.isSafeInteger(first) || first < 1 || first > second) {
      throw new RangeError(`no consistency proof from tree size ${first} to ${second}`)
    }
    const subproof = async (m: number, start: number, n: number, whole: boolean): Promise<Array<Uint8Array>> => {
      if (m === n) return whole ? [] : [await this.subtreeHash(start, n)]
      const k = splitPoint(n)
      return m <= k
        ? [...(await subproof(m, start, k, whole)), await this.subtreeHash(start + k, n - k)]
        : [...(await subproof(m - k, start + k, n - k, false)), await this.subtreeHash(start, k)]
    }
    return subproof(first, 0, second, true)
  }
}

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((byte, i) => byte === b[i])

/**
 * RFC 9162 section 2.1.3.2: does `auditPath` prove that `leafHash` is leaf `index` of the tree of
 * `treeSize` leaves whose root is `rootHash`? Never throws.
 */
export const verifyInclusion = async (input: {
  readonly leafHash: Uint8Array
  readonly index: number
  readonly treeSize: number
  readonly auditPath: ReadonlyArray<Uint8Array>
  readonly rootHash: Uint8Array
}): Promise<boolean> => {
  const { index, treeSize } = input
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return false
  if (input.leafHash.length !== 32 || input.rootHash.length !== 32) return false
  let fn = index
  let sn = treeSize - 1
  let r = input.leafHash
  for (const p of input.auditPath) {
    if (p.length !== 32) return false
    if (sn === 0) return false
    if (fn % 2 === 1 || fn === sn) {
      r = await merkleNodeHash(p, r)
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2)
        sn = Math.floor(sn / 2)
      }
    } else {
      r = await merkleNodeHash(r, p)
    }
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 && equalBytes(r, input.rootHash)
}

/**
 * RFC 9162 section 2.1.4.2: does `proof` show that the tree of `first` leaves with root `firstRoot` is a prefix of the
 * tree of `second` leaves with root `secondRoot`? Requires 1 <= first <= second (a proof from the empty tree proves
 * nothing, as in transparency-dev/merkle); first = second needs an empty proof and equal roots. Never throws.
 */
export const verifyConsistency = async (input: {
  readonly first: number
  readonly second: number
  readonly firstRoot: Uint8Array
  readonly secondRoot: Uint8Array
  readonly proof: ReadonlyArray<Uint8Array>
}): Promise<boolean> => {
  const { first, second, firstRoot, secondRoot } = input
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false
  if (first === second) return input.proof.length === 0 && equalBytes(firstRoot, secondRoot)
  if (firstRoot.length !== 32 || secondRoot.length !== 32 || input.proof.some((p) => p.length !== 32)) return false
  // 1. A first tree that is a perfect subtree is its own first proof node.
  const path = isPowerOfTwo(first) ? [firstRoot, ...input.proof] : [...input.proof]
  if (path.length === 0) return false
  // 2-3. Shifts on numbers past 2^31 must not use 32-bit operators.
  let fn = first - 1
  let sn = second - 1
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  // 4.
  let fr = path[0]!
  let sr = path[0]!
  // 5.
  for (const c of path.slice(1)) {
    if (sn === 0) return false
    if (fn % 2 === 1 || fn === sn) {
      fr = await merkleNodeHash(c, fr)
      sr = await merkleNodeHash(c, sr)
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2)
        sn = Math.floor(sn / 2)
      }
    } else {
      sr = await merkleNodeHash(sr, c)
    }
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  // 6.
  return sn === 0 && equalBytes(fr, firstRoot) && equalBytes(sr, secondRoot)
}

export { bytesToHex as merkleHashToHex }
