/**
 * Cross-process control of a running fake provider (programs/fake-provider.ts) through its
 * `/_fake/*` endpoints, for tests where the provider lives in another process.
 */
import type { Behaviour } from "../../programs/fake-provider.ts"

export interface ReceivedSummary {
  /** requests currently kept (the program keeps the most recent 10 000) */
  count: number
  /** requests received since start or the last reset */
  total_since_reset: number
  requests: Array<{
    method: string
    path: string
    headers: Record<string, string | string[] | undefined>
    /** the raw body decoded as UTF-8 */
    body: string
    at: number
  }>
}

export interface FakeProviderControl {
  received(): Promise<ReceivedSummary>
  open(): Promise<number>
  reset(): Promise<void>
  setBehaviour(b: Behaviour): Promise<void>
}

const expectOk = async (res: Response): Promise<unknown> => {
  const text = await res.text()
  if (!res.ok) throw new Error(`fake provider control answered ${res.status}: ${text}`)
  return JSON.parse(text)
}

/** `url` is the provider origin (no /v1), e.g. FakeProvider.url. */
export const fakeProviderControl = (url: string): FakeProviderControl => ({
  received: async () => (await expectOk(await fetch(`${url}/_fake/received`))) as ReceivedSummary,
  open: async () => ((await expectOk(await fetch(`${url}/_fake/open`))) as { open: number }).open,
  reset: async () => {
    await expectOk(await fetch(`${url}/_fake/reset`, { method: "POST" }))
  },
  setBehaviour: async (b) => {
    await expectOk(
      await fetch(`${url}/_fake/behaviour`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(b)
      })
    )
  }
})
