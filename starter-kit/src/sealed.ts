/** JSON values sealed with AES-256-GCM under the non-extractable sealing key (keys.ts): what IndexedDB holds. */
import { sealingKey } from "./keys.ts"

export interface Sealed {
  readonly iv: Uint8Array
  readonly data: ArrayBuffer
}

export const seal = async (value: unknown): Promise<Sealed> => {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const data = await crypto.subtle.encrypt({ name: "AES-GCM", iv: iv as BufferSource }, await sealingKey(), new TextEncoder().encode(JSON.stringify(value)))
  return { iv, data }
}

export const unseal = async <T>(sealed: Sealed): Promise<T> => {
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: sealed.iv as BufferSource }, await sealingKey(), sealed.data)
  return JSON.parse(new TextDecoder().decode(plain)) as T
}
