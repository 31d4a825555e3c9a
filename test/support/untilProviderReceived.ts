/**
 * Waits until the fake provider has received `count` requests in all: the event a test needs before it sends a
 * duplicate that must find the original in flight (a fixed sleep loses that race on a loaded machine).
 */
export const untilProviderReceived = async (
  provider: { readonly received: ReadonlyArray<unknown> },
  count: number,
  timeoutMs = 10_000
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (provider.received.length < count) {
    if (Date.now() > deadline) throw new Error(`the fake provider received ${provider.received.length} of ${count} requests within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
