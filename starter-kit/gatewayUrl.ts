/**
 * The gateway URL rule of the starter kit's server: https, or plain http to a loopback address for development; no
 * credentials, query or fragment (the key is sent there, so a typo must not send it elsewhere in the clear).
 */
import { StarterConfigError } from "./gatewayKeyFile.ts"

export const isLoopbackHost = (hostname: string): boolean => {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase()
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** https, or plain http to a loopback address for development; no trailing slash. */
export const parseGatewayUrl = (raw: string | undefined): string => {
  if (raw === undefined || raw.trim() === "") throw new StarterConfigError("GATEWAY_URL is not set: give the base URL of your Privacy Relay gateway (https://...).")
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new StarterConfigError(`GATEWAY_URL ${JSON.stringify(raw)} is not a URL.`)
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new StarterConfigError("GATEWAY_URL must be a plain base URL (no credentials, query or fragment).")
  }
  if (!(url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname)))) {
    throw new StarterConfigError(`GATEWAY_URL ${url.origin} must be https (plain http only to 127.0.0.1/localhost for development).`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
}
