/**
 * The GATEWAY_URL rule every client program shares (the local proxy, the MCP server, the demo, the SDK's clients and
 * the starter kit's server): https, or plain http to a loopback address for development; no credentials, query or
 * fragment, because the gateway key is sent there and a typo must not send it elsewhere in the clear. Whether the URL
 * answers as a gateway is asked later (client/gatewayUrl.ts, the identity probe). Portable: no import but the
 * settings machinery, so it is part of `@privacy-relay/sdk/wire`'s `Settings`.
 */
import { ConfigInvalid, custom, nonEmpty, type Setting } from "./setting.ts"

/** localhost (and names under .localhost), ::1 and 127.0.0.0/8: the addresses plain http may go to. */
export const isLoopbackHost = (hostname: string): boolean => {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase()
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host)
  return v4 !== null && Number(v4[1]) === 127
}

/**
 * GATEWAY_URL as a base URL without a trailing slash (an origin, optionally with a path prefix). Throws
 * `ConfigInvalid` naming the rule that failed.
 */
export const parseGatewayUrl = (raw: string | undefined): string => {
  if (raw === undefined || raw.trim() === "") {
    throw new ConfigInvalid("GATEWAY_URL is not set: give the base URL of your Privacy Relay gateway (https://...).")
  }
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new ConfigInvalid(`GATEWAY_URL ${JSON.stringify(raw)} is not a URL.`)
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigInvalid("GATEWAY_URL must not carry credentials; the gateway key comes from GATEWAY_KEY_FILE.")
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ConfigInvalid("GATEWAY_URL must not have a query or fragment.")
  }
  if (url.protocol === "http:") {
    if (!isLoopbackHost(url.hostname)) {
      throw new ConfigInvalid(
        `GATEWAY_URL ${url.origin} is plain http to a non-loopback host; a gateway must be reached over https (plain http is allowed only to 127.0.0.1/localhost for development).`
      )
    }
  } else if (url.protocol !== "https:") {
    throw new ConfigInvalid(`GATEWAY_URL must be an https URL, not ${url.protocol}`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
}

const GATEWAY_URL_ALLOWED = "an https URL of a gateway, or http to 127.0.0.1/localhost, without credentials, query or fragment"

/** GATEWAY_URL, checked at start so a mistyped URL stops the program there. Unset is `fallback` (undefined: unset). */
export const gatewayUrlSetting = (fallback?: string): Setting<string | undefined> =>
  custom("GATEWAY_URL", GATEWAY_URL_ALLOWED, fallback ?? "unset", (raw) => {
    const value = nonEmpty(raw) ?? fallback
    return value === undefined ? undefined : parseGatewayUrl(value)
  })

/** GATEWAY_URL for a program that cannot run without a gateway (the local proxy, the starter kit): unset stops it too. */
export const requiredGatewayUrlSetting: Setting<string> = custom("GATEWAY_URL", GATEWAY_URL_ALLOWED, "required", (raw) => parseGatewayUrl(raw))
