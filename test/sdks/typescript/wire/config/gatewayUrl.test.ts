// The GATEWAY_URL rule in the SDK's wire (sdks/typescript/src/wire/config/gatewayUrl.ts), the one copy the SDK's
// programs and the starter kit's server use (as `Settings` of @privacy-relay/sdk/wire). Its refusals are
// ConfigInvalid, the settings machinery's error; the SDK's clients see them as ProxyStartError
// (test/sdks/typescript/client/gatewayUrl.test.ts).
import { describe, expect, it } from "vitest"
import { isLoopbackHost, parseGatewayUrl, requiredGatewayUrlSetting, gatewayUrlSetting } from "../../../../../sdks/typescript/src/wire/config/gatewayUrl.ts"
import { ConfigInvalid, readSettings } from "../../../../../sdks/typescript/src/wire/config/setting.ts"
import { Settings } from "../../../../../sdks/typescript/src/wire/index.ts"

describe("GATEWAY_URL in the wire's Settings", () => {
  it("loopback is localhost (and *.localhost), ::1 and 127.0.0.0/8, nothing else", () => {
    for (const host of ["localhost", "app.localhost", "LOCALHOST", "::1", "[::1]", "127.0.0.1", "127.1.2.3"]) expect(isLoopbackHost(host), host).toBe(true)
    for (const host of ["10.0.0.5", "127.0.0.1.nip.io", "example.com", "128.0.0.1", "[::2]", "0.0.0.0"]) expect(isLoopbackHost(host), host).toBe(false)
  })

  it("a refused URL is a ConfigInvalid naming the rule; a good one is its base without a trailing slash", () => {
    expect(parseGatewayUrl("https://gw.example.com/relay/")).toBe("https://gw.example.com/relay")
    expect(parseGatewayUrl("http://127.0.0.1:8080/")).toBe("http://127.0.0.1:8080")
    const refusal = (raw: string | undefined) => {
      try {
        parseGatewayUrl(raw)
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigInvalid)
        return (error as Error).message
      }
      throw new Error(`${raw} was accepted`)
    }
    expect(refusal("http://relay.example")).toBe(
      "GATEWAY_URL http://relay.example is plain http to a non-loopback host; a gateway must be reached over https (plain http is allowed only to 127.0.0.1/localhost for development)."
    )
    expect(refusal("https://user:pw@gw.example.com")).toBe("GATEWAY_URL must not carry credentials; the gateway key comes from GATEWAY_KEY_FILE.")
    expect(refusal("https://gw.example.com/#x")).toBe("GATEWAY_URL must not have a query or fragment.")
    expect(refusal("ftp://gw.example.com")).toBe("GATEWAY_URL must be an https URL, not ftp:")
    expect(refusal(" ")).toBe("GATEWAY_URL is not set: give the base URL of your Privacy Relay gateway (https://...).")
  })

  it("as settings: the required one refuses unset, the optional one is unset or its fallback", () => {
    expect(readSettings({ url: requiredGatewayUrlSetting }, { GATEWAY_URL: "https://gw.example.com/" })).toEqual({ url: "https://gw.example.com" })
    expect(() => readSettings({ url: requiredGatewayUrlSetting }, {})).toThrow(ConfigInvalid)
    expect(readSettings({ url: gatewayUrlSetting() }, { GATEWAY_URL: "" })).toEqual({ url: undefined })
    expect(readSettings({ url: gatewayUrlSetting("http://localhost:8787") }, {})).toEqual({ url: "http://localhost:8787" })
    expect(() => readSettings({ url: gatewayUrlSetting() }, { GATEWAY_URL: "http://relay.example" })).toThrow(ConfigInvalid)
  })

  it("is what @privacy-relay/sdk/wire's Settings namespace exports (the starter kit's import)", () => {
    expect(Settings.parseGatewayUrl).toBe(parseGatewayUrl)
    expect(Settings.requiredGatewayUrlSetting).toBe(requiredGatewayUrlSetting)
    expect(Settings.isLoopbackHost).toBe(isLoopbackHost)
    expect(Settings.ConfigInvalid).toBe(ConfigInvalid)
  })
})
