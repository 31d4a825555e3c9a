/**
 * Whether the text of a request body (every string in it, keys included) is at most `limit` characters, found
 * without serialising it and stopping as soon as the count passes the limit: the local proxy asks this of every
 * body to decide whether tokenising it can be done on the spot or belongs in a worker thread. Iterative (a deeply
 * nested body cannot overflow the stack) and lazy (a huge array is not copied before the first string is counted).
 */
export const textAtMost = (value: unknown, limit: number): boolean => {
  let left = limit
  const pending: Array<Iterator<unknown>> = [[value][Symbol.iterator]()]
  while (pending.length > 0) {
    const next = pending[pending.length - 1].next()
    if (next.done === true) {
      pending.pop()
      continue
    }
    const item = next.value
    if (typeof item === "string") {
      left -= item.length
      if (left < 0) return false
    } else if (Array.isArray(item)) {
      pending.push(item[Symbol.iterator]())
    } else if (typeof item === "object" && item !== null) {
      // Keys count as text too; entries are read one at a time.
      pending.push(objectText(item as Record<string, unknown>))
    }
  }
  return true
}

function* objectText(record: Record<string, unknown>): Generator<unknown> {
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue
    yield key
    yield record[key]
  }
}
