import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ProxyStartError } from "../../../../sdks/typescript/src/client/ProxyStartError.ts"
import { loadProxySettings, parseEmbeddingAliases, parseNameModelSetting } from "../../../../sdks/typescript/src/proxy/proxyConfig.ts"

const dir = mkdtempSync(join(tmpdir(), "proxy-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const configFile = (content: unknown) => {
  const path = join(dir, `c-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}

describe("proxy settings", () => {
  it("defaults to 127.0.0.1:8799 with the built-in name model", () => {
    expect(loadProxySettings({})).toEqual({
      host: "127.0.0.1",
      port: 8799,
      gatewayUrl: undefined,
      gatewayKeyFile: undefined,
      nameModel: { kind: "builtin" },
      embeddingAliases: "stable",
      tokeniseTimeoutMs: undefined,
      streaming: true,
      fileMaxBytes: undefined,
      mediaPolicy: "refuse",
      passthroughPaths: []
    })
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
    expect(() => loadProxySettings({ MEDIA_POLICY: "blur" })).toThrow(/MEDIA_POLICY "blur" must be refuse, redact or pass/)
    expect(() => loadProxySettings({ PASSTHROUGH_PATHS: "metadata.trace" })).toThrow(/PASSTHROUGH_PATHS entry "metadata.trace" must be a JSON pointer/)
    expect(() => loadProxySettings({ PASSTHROUGH_PATHS: "/" })).toThrow(ProxyStartError)
  })

  it("reads a PROXY_CONFIG file with the same keys; the environment wins", () => {
    const path = configFile({
      port: 9100,
      gateway_url: "https://a.example",
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
  })

  it("refuses unknown config keys, naming that there is no provider URL setting", () => {
    const path = configFile({ provider_url: "https://api.openai.com" })
    expect(() => loadProxySettings({ PROXY_CONFIG: path })).toThrow(/unknown key "provider_url".*no provider URL setting/)
  })

  it("refuses a missing or malformed config file and bad ports", () => {
    expect(() => loadProxySettings({ PROXY_CONFIG: join(dir, "absent.json") })).toThrow(/does not exist/)
    expect(() => loadProxySettings({ PROXY_CONFIG: configFile("{oops") })).toThrow(/not valid JSON/)
    expect(() => loadProxySettings({ PROXY_PORT: "http" })).toThrow(/not a port number/)
    expect(() => loadProxySettings({ PROXY_STREAMING: "maybe" })).toThrow(/PROXY_STREAMING "maybe" must be on or off/)
    expect(() => loadProxySettings({ PROXY_FILE_MAX_BYTES: "20MB" })).toThrow(/PROXY_FILE_MAX_BYTES "20MB" must be a whole number of bytes/)
    expect(() => loadProxySettings({ PROXY_PORT: "70000" })).toThrow(/not a port number/)
    expect(() => loadProxySettings({ TOKENISE_TIMEOUT_MS: "0" })).toThrow(/TOKENISE_TIMEOUT_MS "0" must be a whole number/)
    expect(() => loadProxySettings({ TOKENISE_TIMEOUT_MS: "1.5s" })).toThrow(/TOKENISE_TIMEOUT_MS/)
  })

  it("NAME_MODEL is builtin, compromise, off or an http(s) URL", () => {
    expect(parseNameModelSetting(undefined)).toEqual({ kind: "builtin" })
    expect(parseNameModelSetting("builtin")).toEqual({ kind: "builtin" })
    expect(parseNameModelSetting("compromise")).toEqual({ kind: "compromise" })
    expect(parseNameModelSetting("https://ner.example/v1")).toEqual({ kind: "http", url: "https://ner.example/v1" })
    expect(() => parseNameModelSetting("spacy")).toThrow(/must be builtin, compromise, off, or an http\(s\) URL/)
  })

  it("EMBEDDING_ALIASES is stable (default) or per-request, also as embedding_aliases in the file", () => {
    expect(parseEmbeddingAliases(undefined)).toBe("stable")
    expect(parseEmbeddingAliases("per-request")).toBe("per-request")
    expect(() => parseEmbeddingAliases("random")).toThrow(/EMBEDDING_ALIASES "random" must be stable or per-request/)
    expect(loadProxySettings({ PROXY_CONFIG: configFile({ embedding_aliases: "per-request" }) }).embeddingAliases).toBe("per-request")
  })
})
