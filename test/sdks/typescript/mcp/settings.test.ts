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
    expect(readMcpSettings({ NAME_MODEL: "http://127.0.0.1:7000/ner" }).nameModel).toBe("http://127.0.0.1:7000/ner")
    expect(() => readMcpSettings({ NAME_MODEL: "spacy" })).toThrow(
      'NAME_MODEL must be builtin, compromise, off, or an http(s) URL of a name-model endpoint, got "spacy"'
    )
  })
})

describe("MCP server settings: every value is checked at start, one line naming the setting and what is allowed", () => {
  const refused = (env: Record<string, string>) => {
    try {
      readMcpSettings(env)
    } catch (error) {
      expect(error).toBeInstanceOf(McpSettingsError)
      return (error as Error).message
    }
    throw new Error(`${JSON.stringify(env)} was accepted`)
  }

  it("numbers, enums, on/off and paths", () => {
    expect(refused({ MCP_TRANSPORT: "carrier-pigeon" })).toBe('MCP_TRANSPORT must be one of stdio, http, got "carrier-pigeon"')
    expect(refused({ MCP_PORT: "80a" })).toBe('MCP_PORT must be a port number (0-65535), got "80a"')
    expect(refused({ MCP_ALIAS_MAX: "0" })).toBe('MCP_ALIAS_MAX must be a whole number from 1 to 10000000, got "0"')
    expect(refused({ MCP_OCR_TIMEOUT_SECONDS: "1.5" })).toBe('MCP_OCR_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 3600, got "1.5"')
    expect(refused({ MCP_OCR: "maybe" })).toBe('MCP_OCR must be on or off, got "maybe"')
    expect(refused({ MCP_ALLOW_REMOTE: "yes" })).toBe('MCP_ALLOW_REMOTE must be on or off, got "yes"')
    expect(refused({ MCP_RECEIPTS_FILE: "~bob/r.jsonl" })).toMatch(/^MCP_RECEIPTS_FILE ~bob\/r\.jsonl: only ~ or ~\//)
  })

  it("defaults, and blank counts as unset", () => {
    const settings = readMcpSettings({ MCP_PORT: "", MCP_OCR: "", HOME: "/home/u" })
    expect(settings).toMatchObject({ transport: "stdio", host: "127.0.0.1", port: 9473, aliasMaxEntries: 10_000, sessionIdleMs: 1_800_000, maxSessions: 100 })
    expect(settings.ocr).toEqual({ enabled: true, timeoutMs: 60_000, maxPixels: 20_000_000, idleMs: 300_000 })
    expect(settings.receiptsFile).toBe("/home/u/.config/privacy-relay/mcp-receipts.jsonl")
  })

  it("a non-loopback HTTP bind needs MCP_ALLOW_REMOTE and a bearer token file", () => {
    expect(refused({ MCP_TRANSPORT: "http", MCP_HOST: "0.0.0.0" })).toMatch(/^MCP_HOST 0\.0\.0\.0 is not a loopback address/)
    expect(refused({ MCP_TRANSPORT: "http", MCP_HOST: "0.0.0.0", MCP_ALLOW_REMOTE: "1" })).toMatch(/^MCP_ALLOW_REMOTE=1 needs MCP_BEARER_TOKEN_FILE/)
  })
})
