// A size-bounded least-recently-used map. A JavaScript Map iterates in insertion order, so moving an entry to
// the end on every hit makes the first key the least recently used one: eviction is O(1) without a linked list.

export class BoundedLru<K, V> {
  readonly #entries = new Map<K, V>()
  readonly #onEvict: ((key: K, value: V) => void) | undefined
  readonly bound: number

  /** `onEvict` is told of each entry pushed out by the bound (not of `delete` or `clear`). */
  constructor(bound: number, onEvict?: (key: K, value: V) => void) {
    if (!Number.isSafeInteger(bound) || bound < 1) throw new RangeError("LRU bound must be a positive integer")
    this.bound = bound
    this.#onEvict = onEvict
  }

  get size(): number {
    return this.#entries.size
  }

  /** The value for `key`, marking it most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key)
    if (value === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, value)
    return value
  }

  /** Stores `key` as the most recently used entry, evicting the least recently used one beyond the bound. */
  set(key: K, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    if (this.#entries.size > this.bound) {
      const oldest = this.#entries.entries().next()
      if (!oldest.done) {
        this.#entries.delete(oldest.value[0])
        this.#onEvict?.(oldest.value[0], oldest.value[1])
      }
    }
  }

  delete(key: K): void {
    this.#entries.delete(key)
  }

  clear(): void {
    this.#entries.clear()
  }
}
