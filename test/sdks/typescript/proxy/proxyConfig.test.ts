import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ProxyStartError } from "../../../../sdks/typescript/src/client/ProxyStartError.ts"
import { loadProxySettings } from "../../../../sdks/typescript/src/proxy/proxyConfig.ts"

const dir = mkdtempSync(join(tmpdir(), "proxy-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
/** The one setting without a default: every other check runs with it set. */
const GW = { GATEWAY_URL: "https://gw.example.com" }
const configFile = (content: unknown) => {
  const path = join(dir, `c-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

describe("proxy settings", () => {
  it("defaults to 127.0.0.1:8799 with the built-in name model; GATEWAY_URL is required", () => {
    expect(loadProxySettings(GW)).toEqual({
      host: "127.0.0.1",
      port: 8799,
      gatewayUrl: "https://gw.example.com",
      gatewayKeyFile: undefined,
      nameModel: { kind: "builtin" },
      embeddingAliases: "stable",
      tokeniseTimeoutMs: 60_000,
      streaming: true,
      fileMaxBytes: 20_000_000,
      mediaPolicy: "refuse",
      passthroughPaths: []
    })
    expect(() => loadProxySettings({})).toThrow("GATEWAY_URL is not set: give the base URL of your Privacy Relay gateway (https://...).")
    // A blank variable is unset, as in a compose file's `NAME=`.
    expect(loadProxySettings({ ...GW, PROXY_PORT: "", PROXY_HOST: " " })).toMatchObject({ host: "127.0.0.1", port: 8799 })
  })

  it("reads the environment", () => {
    const settings = loadProxySettings({
      PROXY_HOST: "::1",
      PROXY_PORT: "9001",
      GATEWAY_URL: "https://gw.example.com",
      GATEWAY_KEY_FILE: "/k",
      NAME_MODEL: "off",
      EMBEDDING_ALIASES: "per-request",
      TOKENISE_TIMEOUT_MS: "15000",
      PROXY_STREAMING: "off",
      PROXY_FILE_MAX_BYTES: "1000000",
      MEDIA_POLICY: "pass",
      PASSTHROUGH_PATHS: " /x_trace , /messages/*/x_tag"
    })
    expect(settings).toEqual({
      host: "::1",
      port: 9001,
      gatewayUrl: "https://gw.example.com",
      gatewayKeyFile: "/k",
      nameModel: { kind: "off" },
      embeddingAliases: "per-request",
      tokeniseTimeoutMs: 15000,
      streaming: false,
      fileMaxBytes: 1000000,
      mediaPolicy: "pass",
      passthroughPaths: ["/x_trace", "/messages/*/x_tag"]
    })
  })

  it("refuses a MEDIA_POLICY or a PASSTHROUGH_PATHS entry it does not understand, naming the setting", () => {
    expect(() => loadProxySettings({ ...GW, MEDIA_POLICY: "blur" })).toThrow('MEDIA_POLICY must be one of refuse, redact, pass, got "blur"')
    expect(() => loadProxySettings({ ...GW, PASSTHROUGH_PATHS: "/ok,metadata.trace" })).toThrow(
      'PASSTHROUGH_PATHS must be a comma-separated list of JSON pointers to fields, such as /metadata/trace or /messages/*/x_tag, got "metadata.trace"'
    )
    expect(() => loadProxySettings({ ...GW, PASSTHROUGH_PATHS: "/" })).toThrow(ProxyStartError)
  })

  it("reads a PROXY_CONFIG file with the same keys; the environment wins", () => {
    const path = configFile({
      port: 9100,
      gateway_url: "https://a.example/",
      gateway_key_file: "/f",
      name_model: "http://127.0.0.1:7000/ner",
      tokenise_timeout_ms: 30000
    })
    expect(loadProxySettings({ PROXY_CONFIG: path })).toMatchObject({
      port: 9100,
      tokeniseTimeoutMs: 30000,
      gatewayUrl: "https://a.example",
      gatewayKeyFile: "/f",
      nameModel: { kind: "http", url: "http://127.0.0.1:7000/ner" }
    })
    expect(loadProxySettings({ PROXY_CONFIG: path, PROXY_PORT: "9200" }).port).toBe(9200)
    // A blank variable does not hide the file's value.
    expect(loadProxySettings({ PROXY_CONFIG: path, PROXY_PORT: "" }).port).toBe(9100)
  })

  it("a bad value in the file is refused like the variable, naming the variable, the key and the file", () => {
    const path = configFile({ gateway_url: "https://a.example", port: 70000 })
    expect(() => loadProxySettings({ PROXY_CONFIG: path })).toThrow(`PROXY_PORT must be a port number (0-65535; 0 picks a free port), got "70000" ("port" in the PROXY_CONFIG file ${path})`)
    // The environment wins, so a good variable over a bad file value starts.
    expect(loadProxySettings({ PROXY_CONFIG: path, PROXY_PORT: "0" }).port).toBe(0)
    expect(() => loadProxySettings({ PROXY_CONFIG: configFile({ gateway_url: "https://a.example", streaming: 1 }) })).toThrow('"streaming" must be a string.')
  })

  it("refuses unknown config keys, naming that there is no provider URL setting", () => {
    const path = configFile({ provider_url: "https://api.openai.com" })
    expect(() => loadProxySettings({ ...GW, PROXY_CONFIG: path })).toThrow(/unknown key "provider_url".*no provider URL setting/)
  })

  it("refuses a missing or malformed config file and bad numbers, each with one line naming the variable and what is allowed", () => {
    expect(() => loadProxySettings({ ...GW, PROXY_CONFIG: join(dir, "absent.json") })).toThrow(/does not exist/)
    expect(() => loadProxySettings({ ...GW, PROXY_CONFIG: configFile("{oops") })).toThrow(/not valid JSON/)
    const refusal = (env: Record<string, string>) => {
      try {
        loadProxySettings({ ...GW, ...env })
      } catch (error) {
        expect(error).toBeInstanceOf(ProxyStartError)
        expect((error as ProxyStartError).reason).toBe("invalid_setting")
        return (error as Error).message
      }
      throw new Error(`${JSON.stringify(env)} was accepted`)
    }
    expect(refusal({ PROXY_PORT: "http" })).toBe('PROXY_PORT must be a port number (0-65535; 0 picks a free port), got "http"')
    expect(refusal({ PROXY_PORT: "70000" })).toBe('PROXY_PORT must be a port number (0-65535; 0 picks a free port), got "70000"')
    expect(refusal({ PROXY_STREAMING: "maybe" })).toBe('PROXY_STREAMING must be on or off, got "maybe"')
    expect(refusal({ PROXY_FILE_MAX_BYTES: "20MB" })).toBe('PROXY_FILE_MAX_BYTES must be a whole number of bytes from 1 to 1000000000, got "20MB"')
    expect(refusal({ TOKENISE_TIMEOUT_MS: "0" })).toBe('TOKENISE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 3600000, got "0"')
    expect(refusal({ TOKENISE_TIMEOUT_MS: "1.5s" })).toMatch(/^TOKENISE_TIMEOUT_MS must be/)
    expect(refusal({ GATEWAY_URL: "ftp://gw.example.com" })).toBe("GATEWAY_URL must be an https URL, not ftp:")
    expect(refusal({ GATEWAY_KEY_FILE: "~bob/key" })).toMatch(/^GATEWAY_KEY_FILE ~bob\/key: only ~ or ~\/ .* is expanded, not ~user/)
    expect(refusal({ PRIVACY_RELAY_CONFIG_DIR: "~bob/relay" })).toMatch(/^PRIVACY_RELAY_CONFIG_DIR ~bob\/relay: only ~ or ~\//)
  })

  it("NAME_MODEL is builtin, compromise, off or an http(s) URL", () => {
    const nameModel = (value: string) => loadProxySettings({ ...GW, NAME_MODEL: value }).nameModel
    expect(nameModel("")).toEqual({ kind: "builtin" })
    expect(nameModel("builtin")).toEqual({ kind: "builtin" })
    expect(nameModel("compromise")).toEqual({ kind: "compromise" })
    expect(nameModel("https://ner.example/v1")).toEqual({ kind: "http", url: "https://ner.example/v1" })
    expect(() => nameModel("spacy")).toThrow('NAME_MODEL must be builtin, compromise, off, or an http(s) URL of a name-model endpoint, got "spacy"')
  })

  it("EMBEDDING_ALIASES is stable (default) or per-request, also as embedding_aliases in the file", () => {
    expect(loadProxySettings(GW).embeddingAliases).toBe("stable")
    expect(loadProxySettings({ ...GW, EMBEDDING_ALIASES: "per-request" }).embeddingAliases).toBe("per-request")
    expect(() => loadProxySettings({ ...GW, EMBEDDING_ALIASES: "random" })).toThrow('EMBEDDING_ALIASES must be one of stable, per-request, got "random"')
    expect(loadProxySettings({ ...GW, PROXY_CONFIG: configFile({ embedding_aliases: "per-request" }) }).embeddingAliases).toBe("per-request")
  })
})
