/**
 * The app's one IndexedDB database: keys (the device attester key pair and the sealing key, both non-extractable
 * CryptoKeys, which IndexedDB stores without ever exposing their bytes), conversations (sealed) and receipts.
 */
const DB_NAME = "privacy-relay-starter"
const DB_VERSION = 1

export const STORES = { keys: "keys", conversations: "conversations", receipts: "receipts" } as const
type StoreName = (typeof STORES)[keyof typeof STORES]

let opened: Promise<IDBDatabase> | undefined

const request = <T>(req: IDBRequest<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })

export const openDatabase = (): Promise<IDBDatabase> =>
  (opened ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, DB_VERSION)
    req.onupgradeneeded = () => {
      const db = req.result
      db.createObjectStore(STORES.keys)
      db.createObjectStore(STORES.conversations, { keyPath: "id" })
      db.createObjectStore(STORES.receipts, { keyPath: "messageId" }).createIndex("conversationId", "conversationId")
    }
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => {
      opened = undefined
      reject(req.error)
    }
  }))

const store = async (name: StoreName, mode: IDBTransactionMode) => (await openDatabase()).transaction(name, mode).objectStore(name)

export const get = async <T>(name: StoreName, key: IDBValidKey): Promise<T | undefined> => request((await store(name, "readonly")).get(key))
export const getAll = async <T>(name: StoreName): Promise<Array<T>> => request((await store(name, "readonly")).getAll())
export const put = async (name: StoreName, value: unknown, key?: IDBValidKey): Promise<void> => {
  await request((await store(name, "readwrite")).put(value, key))
}
export const remove = async (name: StoreName, key: IDBValidKey): Promise<void> => {
  await request((await store(name, "readwrite")).delete(key))
}

/** Adds `value` under `key` unless something is there already; answers what is stored (two tabs agree on one key). */
export const getOrAdd = async <T>(name: StoreName, key: IDBValidKey, make: () => Promise<T>): Promise<T> => {
  const existing = await get<T>(name, key)
  if (existing !== undefined) return existing
  const value = await make()
  try {
    await request((await store(name, "readwrite")).add(value, key))
    return value
  } catch {
    return (await get<T>(name, key)) as T
  }
}

/** Deletes the whole database: conversations, receipts and both keys. */
export const deleteDatabase = async (): Promise<void> => {
  const db = await opened?.catch(() => undefined)
  db?.close()
  opened = undefined
  await new Promise<void>((resolve, reject) => {
    const req = indexedDB.deleteDatabase(DB_NAME)
    req.onsuccess = () => resolve()
    req.onerror = () => reject(req.error)
    req.onblocked = () => resolve()
  })
}
