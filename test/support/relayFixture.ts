import { afterAll, beforeAll, beforeEach } from "vitest"
import { type FakeProvider, type FakeProviderOptions, startFakeProvider } from "../../programs/fake-provider.ts"
import { startTestGateway, type TestGateway } from "./gateway.ts"

/**
 * The set-up most relay tests share: a fake provider on loopback, a real gateway whose `local` providers point at
 * it, both closed after the file, and the provider's recording cleared before each test.
 */
export const useRelayFixture = (extraEnv: Record<string, string> = {}, providerOptions: FakeProviderOptions = {}) => {
  const fixture = {} as { provider: FakeProvider; gw: TestGateway }
  beforeAll(async () => {
    fixture.provider = await startFakeProvider({ port: 0, ...providerOptions })
    fixture.gw = await startTestGateway({ LOCAL_PROVIDER_URL: fixture.provider.url, ...extraEnv })
  })
  afterAll(async () => {
    await fixture.gw?.close()
    await fixture.provider?.close()
  })
  beforeEach(() => fixture.provider.reset())
  return fixture
}
