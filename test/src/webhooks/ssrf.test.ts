import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  checkWebhookUrl,
  classifyAddress,
  type LookupAll,
  parseHostLiteral,
  pinnedLookup,
  resolveAndCheck
} from "../../../src/webhooks/ssrf.ts"

const fixedLookup = (answers: Record<string, readonly string[]>): LookupAll => async (hostname) => {
  const addresses = answers[hostname]
  if (addresses === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

describe("classifyAddress", () => {
  const refusedCases: ReadonlyArray<readonly [string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "metadata"],
    ["169.254.1.1", "link_local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "reserved"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmark"],
    ["198.19.255.255", "benchmark"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link_local"],
    ["febf::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456::1", "unique_local"],
    ["fd00:ec2::254", "metadata"],
    ["ff02::1", "multicast"],
    ["fec0::1", "site_local"],
    ["::ffff:127.0.0.1", "ipv4_mapped:loopback"],
    ["[::ffff:127.0.0.1]", "ipv4_mapped:loopback"],
    ["::ffff:7f00:1", "ipv4_mapped:loopback"],
    ["::ffff:a9fe:a9fe", "ipv4_mapped:metadata"],
    ["::ffff:10.1.2.3", "ipv4_mapped:private"],
    ["::7f00:1", "ipv4_compatible"],
    ["::127.0.0.1", "ipv4_compatible"],
    ["64:ff9b::10.0.0.1", "nat64:private"],
    ["64:ff9b::7f00:1", "nat64:loopback"],
    ["64:ff9b:1::1", "nat64_local"],
    ["2002:7f00:1::1", "6to4:loopback"],
    ["2002:c0a8:0101::", "6to4:private"],
    ["2001:db8::1", "documentation"],
    ["2001:0:4136:e378::1", "reserved"], // Teredo
    ["100::1", "reserved"], // discard-only
    ["not-an-ip", "not_an_ip"]
  ]

  it.each(refusedCases)("refuses %s (%s)", (ip, reason) => {
    expect(classifyAddress(ip)).toEqual({ allowed: false, reason })
  })

  it("refuses non-canonical spellings of loopback", () => {
    for (const ip of ["0x7f000001", "2130706433", "127.1", "0177.0.0.1", "0x7f.1"]) {
      expect(classifyAddress(ip)).toEqual({ allowed: false, reason: "loopback" })
    }
  })

  it("allows public addresses, including public IPv4 reached through NAT64 and 6to4", () => {
    expect(classifyAddress("93.184.216.34")).toEqual({ allowed: true, reason: "public" })
    expect(classifyAddress("8.8.8.8")).toEqual({ allowed: true, reason: "public" })
    expect(classifyAddress("172.32.0.1")).toEqual({ allowed: true, reason: "public" })
    expect(classifyAddress("100.128.0.1")).toEqual({ allowed: true, reason: "public" })
    expect(classifyAddress("2606:2800:220:1:248:1893:25c8:1946")).toEqual({ allowed: true, reason: "public" })
    expect(classifyAddress("64:ff9b::5db8:d822")).toEqual({ allowed: true, reason: "nat64:public" })
    expect(classifyAddress("2002:5db8:d822::1")).toEqual({ allowed: true, reason: "6to4:public" })
  })
})

describe("parseHostLiteral", () => {
  it("reads decimal, hex, octal and short IPv4 forms like WHATWG URL does", () => {
    const hosts = ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1", "0X7F.00.0.01", "127.0.0.1.", "1.2.3.4", "0", "0x"]
    for (const host of hosts) {
      const oracle = new URL(`http://${host}/`).hostname
      expect(parseHostLiteral(host)).toEqual({ kind: "ipv4", address: oracle })
    }
    expect(parseHostLiteral("2130706433")).toEqual({ kind: "ipv4", address: "127.0.0.1" })
    expect(parseHostLiteral("127.1")).toEqual({ kind: "ipv4", address: "127.0.0.1" })
  })

  it("marks as invalid the numeric hosts WHATWG URL refuses", () => {
    for (const host of ["256.0.0.1", "1.2.3.4.5", "4294967296", "0x1g.0.0.1", "09.0.0.1", "1.2.3.256", "1.2.65536"]) {
      expect(() => new URL(`http://${host}/`)).toThrow()
      expect(parseHostLiteral(host).kind).toBe("invalid")
    }
  })

  it("reads bracketed and bare IPv6, and lower-cases names", () => {
    expect(parseHostLiteral("[::1]")).toEqual({ kind: "ipv6", address: "::1" })
    expect(parseHostLiteral("::ffff:127.0.0.1")).toEqual({ kind: "ipv6", address: "::ffff:127.0.0.1" })
    expect(parseHostLiteral("Hooks.Example.COM")).toEqual({ kind: "name", name: "hooks.example.com" })
    expect(parseHostLiteral("1.2.3.example")).toEqual({ kind: "name", name: "1.2.3.example" })
    expect(parseHostLiteral("[nope]").kind).toBe("invalid")
    expect(parseHostLiteral("bad host").kind).toBe("invalid")
    expect(parseHostLiteral("").kind).toBe("invalid")
  })
})

describe("resolveAndCheck", () => {
  it("refuses literal internal addresses in every spelling, without a lookup", async () => {
    const lookup: LookupAll = async () => {
      throw new Error("must not be called for a literal")
    }
    for (const host of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "[::ffff:127.0.0.1]", "0x7f000001", "2130706433", "127.1"]) {
      const result = await resolveAndCheck(host, { allowLoopback: false, lookup })
      expect(result.ok, host).toBe(false)
    }
  })

  it("refuses a name that resolves to a private address", async () => {
    const lookup = fixedLookup({ "internal.example": ["10.1.2.3"] })
    expect(await resolveAndCheck("internal.example", { allowLoopback: false, lookup })).toEqual({ ok: false, reason: "private", address: "10.1.2.3" })
  })

  it("refuses a name when ANY of its addresses is disallowed (rebinding with a mixed answer)", async () => {
    const lookup = fixedLookup({ "mixed.example": ["93.184.216.34", "2606:2800:220:1::1", "::ffff:169.254.169.254"] })
    expect(await resolveAndCheck("mixed.example", { allowLoopback: false, lookup })).toEqual({
      ok: false,
      reason: "ipv4_mapped:metadata",
      address: "::ffff:169.254.169.254"
    })
  })

  it("returns the checked address to connect to for a public name, resolving exactly once", async () => {
    let calls = 0
    const lookup: LookupAll = async (hostname) => {
      calls++
      expect(hostname).toBe("hooks.example.com")
      return [{ address: "93.184.216.34", family: 4 }, { address: "2606:2800:220:1::1", family: 6 }]
    }
    expect(await resolveAndCheck("Hooks.Example.com", { allowLoopback: false, lookup })).toEqual({ ok: true, address: "93.184.216.34", family: 4 })
    expect(calls).toBe(1)
  })

  it("allows a public literal address", async () => {
    expect(await resolveAndCheck("93.184.216.34", { allowLoopback: false })).toEqual({ ok: true, address: "93.184.216.34", family: 4 })
  })

  it("reports DNS failures and empty answers as refusals", async () => {
    const lookup = fixedLookup({ "empty.example": [] })
    expect(await resolveAndCheck("missing.example", { allowLoopback: false, lookup })).toEqual({ ok: false, reason: "dns_error:ENOTFOUND" })
    expect(await resolveAndCheck("empty.example", { allowLoopback: false, lookup })).toEqual({ ok: false, reason: "dns_no_addresses" })
  })

  it("with allowLoopback lets exactly 127.0.0.1 and ::1 through and still refuses everything else", async () => {
    const options = { allowLoopback: true, lookup: fixedLookup({ localhost: ["127.0.0.1", "::1"], "lan.example": ["192.168.0.2"] }) }
    expect(await resolveAndCheck("127.0.0.1", options)).toEqual({ ok: true, address: "127.0.0.1", family: 4 })
    expect(await resolveAndCheck("[::1]", options)).toEqual({ ok: true, address: "::1", family: 6 })
    expect(await resolveAndCheck("localhost", options)).toEqual({ ok: true, address: "127.0.0.1", family: 4 })
    expect(await resolveAndCheck("10.0.0.1", options)).toEqual({ ok: false, reason: "private", address: "10.0.0.1" })
    expect(await resolveAndCheck("127.0.0.2", options)).toMatchObject({ ok: false, reason: "loopback" })
    expect(await resolveAndCheck("169.254.169.254", options)).toMatchObject({ ok: false, reason: "metadata" })
    expect(await resolveAndCheck("lan.example", options)).toMatchObject({ ok: false, reason: "private" })
    expect(await resolveAndCheck("127.0.0.1", { allowLoopback: false })).toMatchObject({ ok: false, reason: "loopback" })
  })
})

describe("checkWebhookUrl", () => {
  const production = { production: true, allowLoopback: false }

  it("accepts an https URL with a public name or address", () => {
    expect(checkWebhookUrl("https://hooks.example.com/receive?x=1", production)).toMatchObject({ ok: true })
    expect(checkWebhookUrl("https://93.184.216.34:8443/hook", production)).toMatchObject({ ok: true })
  })

  it("requires https in production, allows http outside it", () => {
    expect(checkWebhookUrl("http://hooks.example.com/", production)).toEqual({ ok: false, reason: "https_required" })
    expect(checkWebhookUrl("http://hooks.example.com/", { production: false, allowLoopback: false })).toMatchObject({ ok: true })
    expect(checkWebhookUrl("ftp://hooks.example.com/", { production: false, allowLoopback: false })).toEqual({ ok: false, reason: "unsupported_scheme" })
    expect(checkWebhookUrl("not a url", production)).toEqual({ ok: false, reason: "invalid_url" })
  })

  it("refuses credentials in the URL", () => {
    expect(checkWebhookUrl("https://user:pw@hooks.example.com/", production)).toEqual({ ok: false, reason: "credentials_in_url" })
    expect(checkWebhookUrl("https://user@hooks.example.com/", production)).toEqual({ ok: false, reason: "credentials_in_url" })
  })

  it("refuses internal address literals in any spelling, and localhost names", () => {
    for (const url of [
      "https://127.0.0.1/",
      "https://0x7f000001/",
      "https://2130706433/",
      "https://127.1/",
      "https://0177.0.0.1/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://10.0.0.1/",
      "https://169.254.169.254/latest/meta-data/",
      "https://localhost/",
      "https://api.localhost/"
    ]) {
      expect(checkWebhookUrl(url, production).ok, url).toBe(false)
    }
  })

  it("with allowLoopback accepts plain http to 127.0.0.1 and [::1] even in production, nothing else internal", () => {
    const testing = { production: true, allowLoopback: true }
    expect(checkWebhookUrl("http://127.0.0.1:4000/hook", testing)).toMatchObject({ ok: true })
    expect(checkWebhookUrl("http://[::1]:4000/hook", testing)).toMatchObject({ ok: true })
    expect(checkWebhookUrl("http://10.0.0.1/hook", testing)).toEqual({ ok: false, reason: "https_required" })
    expect(checkWebhookUrl("https://10.0.0.1/hook", testing)).toEqual({ ok: false, reason: "private" })
    expect(checkWebhookUrl("http://hooks.example.com/", testing)).toEqual({ ok: false, reason: "https_required" })
  })
})

describe("pinnedLookup", () => {
  let server: Server
  let port: number
  const seenHosts: string[] = []

  beforeAll(async () => {
    server = createServer((req, res) => {
      seenHosts.push(req.headers.host ?? "")
      res.end("pinned")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as AddressInfo).port
  })

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
  })

  it("connects to the checked address while keeping the hostname in Host", async () => {
    const target = await resolveAndCheck("receiver.invalid", {
      allowLoopback: true,
      lookup: fixedLookup({ "receiver.invalid": ["127.0.0.1"] })
    })
    if (!target.ok) throw new Error(`unexpected refusal ${target.reason}`)
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: "receiver.invalid", port, path: "/", lookup: pinnedLookup(target) }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve(text))
      })
      req.on("error", reject)
      req.end()
    })
    expect(body).toBe("pinned")
    expect(seenHosts).toEqual([`receiver.invalid:${port}`])
  })
})
