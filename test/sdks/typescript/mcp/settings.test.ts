import { describe, expect, it } from "vitest"
import { McpSettingsError, readMcpSettings } from "../../../../sdks/typescript/src/mcp/settings.ts"

describe("MCP server settings: GATEWAY_URL is checked at start", () => {
  it("a URL that is not a gateway base URL stops the server with one message naming GATEWAY_URL and what it accepts", () => {
    const refused = (url: string) => {
      try {
        readMcpSettings({ GATEWAY_URL: url })
      } catch (error) {
        expect(error).toBeInstanceOf(McpSettingsError)
        return (error as Error).message
      }
      throw new Error(`GATEWAY_URL=${url} was accepted`)
    }
    expect(refused("gateway.example.com")).toBe('GATEWAY_URL "gateway.example.com" is not a URL.')
    expect(refused("ftp://gateway.example.com")).toBe("GATEWAY_URL must be an https URL, not ftp:")
    expect(refused("http://gateway.example.com")).toMatch(/^GATEWAY_URL http:\/\/gateway\.example\.com is plain http to a non-loopback host/)
    expect(refused("https://svc_secret@gateway.example.com")).toBe("GATEWAY_URL must not carry credentials; the gateway key comes from GATEWAY_KEY_FILE.")
  })

  it("https, or http to this device, is accepted as given (trailing slash dropped); unset stays unset for the on-device tools", () => {
    expect(readMcpSettings({ GATEWAY_URL: "https://gateway.example.com/" }).gatewayUrl).toBe("https://gateway.example.com")
    expect(readMcpSettings({ GATEWAY_URL: "http://127.0.0.1:8080" }).gatewayUrl).toBe("http://127.0.0.1:8080")
    expect(readMcpSettings({}).gatewayUrl).toBeUndefined()
  })
})

describe("MCP server settings: NAME_MODEL", () => {
  it("is builtin (default), compromise (the opt-in), off or an http(s) URL; anything else stops the server naming what it accepts", () => {
    expect(readMcpSettings({}).nameModel).toBe("builtin")
    expect(readMcpSettings({ NAME_MODEL: "compromise" }).nameModel).toBe("compromise")
    expect(readMcpSettings({ NAME_MODEL: "off" }).nameModel).toBe("off")
    expect(() => readMcpSettings({ NAME_MODEL: "spacy" })).toThrow(
      'NAME_MODEL must be "builtin", "compromise", "off" or the http(s) URL of a name model service, not "spacy".'
    )
  })
})
