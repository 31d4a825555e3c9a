import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { detectStructured, type EntityType } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const found = (text: string, type: EntityType): Array<string> =>
  detectStructured(text)
    .filter((s) => s.type === type)
    .map((s) => text.slice(s.start, s.end))

describe("structured detectors", () => {
  it("CARD: a long run of digit groups is judged window by window once (it used to never finish), cards in it found", () => {
    const text = `Card 4111 1111 1111 1111 then ${"12 ".repeat(3000)}and 5500 0000 0000 0004, 4111 1111 1111 1111 2.`
    expect(found(text, "CARD")).toEqual(["4111 1111 1111 1111", "5500 0000 0000 0004", "4111 1111 1111 1111"])
  })

  it("CARD: Luhn plus issuer range and length, grouped by spaces or dashes", () => {
    expect(found("pay 4111 1111 1111 1111 now", "CARD")).toEqual(["4111 1111 1111 1111"])
    expect(found("amex 3782-822463-10005", "CARD")).toEqual(["3782-822463-10005"])
    expect(found("4111 1111 1111 1112", "CARD")).toEqual([]) // Luhn fails
    expect(found("7816195735790054", "CARD")).toEqual([]) // Luhn passes, no scheme starts with 78
    expect(found("411111111111111", "CARD")).toEqual([]) // Visa has no 15-digit numbers
    expect(found("Order #4532015112830366", "CARD")).toEqual([]) // passes Luhn, but labelled an order
    expect(found(" # 378282246310005 ", "CARD")).toEqual(["378282246310005"]) // a bare "#" is no order label
    expect(found("4111 1111 1111 1111 378282246310005", "CARD")).toEqual(["4111 1111 1111 1111", "378282246310005"])
  })

  it("US_SSN: area not 000/666/9xx, group not 00, serial not 0000; bare digits only after an SSN cue", () => {
    expect(found("SSN 250-57-7909", "US_SSN")).toEqual(["250-57-7909"])
    for (const bad of ["000-12-3456", "666-12-3456", "912-12-3456", "250-00-7909", "250-57-0000"]) {
      expect(found(`id ${bad}`, "US_SSN")).toEqual([])
    }
    expect(found("SSN: 250577909", "US_SSN")).toEqual(["250577909"])
    expect(found("ticket 250577909", "US_SSN")).toEqual([])
  })

  it("UK_NINO: prefix letter rules, never-issued prefixes, suffix A-D", () => {
    expect(found("NI AB 12 34 56 C", "UK_NINO")).toEqual(["AB 12 34 56 C"])
    expect(found("NI JG103759A", "UK_NINO")).toEqual(["JG103759A"])
    for (const bad of ["QQ123456C", "GB123456A", "AO123456A", "AB123456E", "DA123456A"]) expect(found(bad, "UK_NINO")).toEqual([])
  })

  it("ES_DNI and NIE: the check letter must match", () => {
    expect(found("DNI 12345678Z", "ES_DNI")).toEqual(["12345678Z"])
    expect(found("NIE X0397284M", "ES_DNI")).toEqual(["X0397284M"])
    expect(found("DNI 12345678A", "ES_DNI")).toEqual([])
  })

  it("FR_NIR: structure and key = 97 - (number mod 97)", () => {
    expect(found("NIR 1 95 12 80 603 399 58", "FR_NIR")).toEqual(["1 95 12 80 603 399 58"])
    expect(found("NIR 195128060339958", "FR_NIR")).toEqual(["195128060339958"])
    expect(found("NIR 195128060339957", "FR_NIR")).toEqual([])
  })

  it("NL_BSN: 11-proof and a BSN cue", () => {
    expect(found("BSN: 942506728", "NL_BSN")).toEqual(["942506728"])
    expect(found("BSN: 942506729", "NL_BSN")).toEqual([])
    expect(found("klant 942506728", "NL_BSN")).toEqual([])
  })

  it("IBAN: ISO 13616 check, electronic or printed, not swallowing the next word", () => {
    expect(found("to DE89 3704 0044 0532 0130 00 FROM me", "IBAN")).toEqual(["DE89 3704 0044 0532 0130 00"])
    expect(found("GB29NWBK60161331926819.", "IBAN")).toEqual(["GB29NWBK60161331926819"])
    expect(found("DE89 3704 0044 0532 0130 01", "IBAN")).toEqual([])
  })

  it("IPV4: octets 0-255, no leading zeros, not versions, announced by network context", () => {
    expect(found("IP 192.168.1.10.", "IPV4")).toEqual(["192.168.1.10"])
    expect(found("10.0.0.1:8080 refused", "IPV4")).toEqual(["10.0.0.1"])
    expect(found("from 256.1.1.1", "IPV4")).toEqual([])
    expect(found("from 010.001.000.001", "IPV4")).toEqual([])
    expect(found("server v1.2.3.4", "IPV4")).toEqual([])
    expect(found("server version 10.0.0.1", "IPV4")).toEqual([])
    expect(found("host 1.2.3.4.5", "IPV4")).toEqual([])
    expect(found("we shipped 4.2.0.1 today", "IPV4")).toEqual([])
    // Announced by the shape: a log line's timestamp, a URL's host, a forwarding header.
    expect(found("2026-11-28T08:00:01Z 10.32.69.1 GET /index.html 200", "IPV4")).toEqual(["10.32.69.1"])
    expect(found("See https://192.168.1.10/admin for the console", "IPV4")).toEqual(["192.168.1.10"])
    expect(found("git clone ssh://deploy@10.0.0.5/repo.git", "IPV4")).toEqual(["10.0.0.5"])
    expect(found("X-Forwarded-For: 203.0.113.9, 10.0.0.2", "IPV4")).toEqual(["203.0.113.9", "10.0.0.2"])
    // ... and not where those shapes hold a version.
    expect(found("2026-11-28 4.2.0.1 released", "IPV4")).toEqual([])
    expect(found("[08:00:01] 1.2.3.4 done", "IPV4")).toEqual([])
    expect(found("Docs at https://example.com/v/1.2.3.4/ now", "IPV4")).toEqual([])
    // Network nouns in the plural and in more languages announce an address too.
    expect(found("Merci d'autoriser 27.16.118.202 sur le pare-feu.", "IPV4")).toEqual(["27.16.118.202"])
    expect(found("De inlogpogingen kwamen van 172.19.53.60.", "IPV4")).toEqual(["172.19.53.60"])
    expect(found("Gli accessi falliti arrivavano da 10.1.2.3.", "IPV4")).toEqual(["10.1.2.3"])
  })

  it("IPV6: full, compressed and IPv4-mapped forms; not times or MAC addresses", () => {
    expect(found("host 2001:db8::8a2e:370:7334 down", "IPV6")).toEqual(["2001:db8::8a2e:370:7334"])
    expect(found("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "IPV6")).toEqual(["2001:0db8:85a3:0000:0000:8a2e:0370:7334"])
    expect(found("inet6 ::1/128 scope host", "IPV6")).toEqual(["::1"])
    expect(found("::ffff:192.0.2.128", "IPV6")).toEqual(["::ffff:192.0.2.128"])
    expect(found("at 14:22:05 from 00:1A:2B:3C:4D:5E", "IPV6")).toEqual([])
    expect(found("1:2:3:4:5:6:7:8:9", "IPV6")).toEqual([])
    // Fewer than three groups written is how code writes slices and scopes: only where an address is announced.
    expect(found("slice with a[::2] or arr[1::3]; the value dead::beef", "IPV6")).toEqual([])
    expect(found("ping fe80::1 now", "IPV6")).toEqual(["fe80::1"])
    expect(found("GET http://[::1]:8080/health", "IPV6")).toEqual(["::1"])
    expect(found("ip=2001:db8::5 and 2001:db8:85a3::7334 in prose", "IPV6")).toEqual(["2001:db8::5", "2001:db8:85a3::7334"])
    expect(found("Host key MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48", "IPV6")).toEqual([])
  })

  it("DATE_OF_BIRTH: ordinal, abbreviated-month, year-first and Italian layouts, the cue after the date, not what a project was born on", () => {
    expect(found("I was born on the 14th of March 1985.", "DATE_OF_BIRTH")).toEqual(["14th of March 1985"])
    expect(found("Harriet's birthday is 12-Jun-1963.", "DATE_OF_BIRTH")).toEqual(["12-Jun-1963"])
    expect(found("Birthdate: 1960/06/24\nDate of issue: 11th February 2019", "DATE_OF_BIRTH")).toEqual(["1960/06/24"])
    expect(found("Il est né le 1er mars 1984 à Lyon.", "DATE_OF_BIRTH")).toEqual(["1er mars 1984"])
    expect(found("Nuria nació el 8 de julio de 1978.", "DATE_OF_BIRTH")).toEqual(["8 de julio de 1978"])
    expect(found('{"data_nascita": "26 febbraio 2000", "joined": "2026-07-13"}', "DATE_OF_BIRTH")).toEqual(["26 febbraio 2000"])
    expect(found("Sophie wurde am 13. August 1989 in Graz geboren.", "DATE_OF_BIRTH")).toEqual(["13. August 1989"])
    expect(found("Le projet est né le 6 mai 2019 d'une idée simple.", "DATE_OF_BIRTH")).toEqual([])
    expect(found("Le patient est né le 3 mai 1950.", "DATE_OF_BIRTH")).toEqual(["3 mai 1950"])
    expect(found("Date of issue: 21 SEP 2019\nDate of expiry: 9th June 2029", "DATE_OF_BIRTH")).toEqual([])
  })

  it("PASSPORT: German Passnummer and Portuguese passaporte cues; a boarding pass or a password is not one", () => {
    expect(found("Lena Becker, Passnummer WX176768.", "PASSPORT")).toEqual(["WX176768"])
    expect(found("Passaporte n.º N123456 emitido em Lisboa.", "PASSPORT")).toEqual(["N123456"])
    expect(found("Boarding pass BP123456 scanned; Passwort AB123456", "PASSPORT")).toEqual([])
  })

  it("national ids: 'personnr' names a personnummer; NINO- and DNI-shaped references after a serial or order label stay", () => {
    expect(found("Thomas's personnr is 871118-9194.", "NATIONAL_ID")).toEqual(["871118-9194"])
    expect(found('{"personnr": "871118-9194"}', "NATIONAL_ID")).toEqual(["871118-9194"])
    expect(found("serial ZM452778C replaced under warranty; NI number ZM452778C", "UK_NINO")).toEqual(["ZM452778C"])
    expect(found("Pedido 12345678Z enviado; DNI 12345678Z", "ES_DNI")).toEqual(["12345678Z"])
  })

  it("EMAIL, PHONE, DATE_OF_BIRTH, PASSPORT, CRYPTO_WALLET, URL_CREDENTIALS", () => {
    expect(found("mail (a.b+c@example.co.uk).", "EMAIL")).toEqual(["a.b+c@example.co.uk"])
    expect(found("remote git@github.com:org/repo.git", "EMAIL")).toEqual([])
    expect(found("call +44 20 7946 0958 or (212) 555-0187", "PHONE")).toEqual(["+44 20 7946 0958", "(212) 555-0187"])
    expect(found("ISBN 978-3-16-148410-0; OID 1.3.6.1.4.1.311", "PHONE")).toEqual([])
    // Brackets with no digit in them right before a number (round-trip property test, seed 1244357578).
    expect(found("  () +44 20 7946 0958  ", "PHONE")).toEqual(["+44 20 7946 0958"])
    expect(found("[ ] +44 20 7946 0958 or (see) 020 7946 0958", "PHONE")).toEqual(["+44 20 7946 0958", "020 7946 0958"])
    expect(found("born on 12 March 1985", "DATE_OF_BIRTH")).toEqual(["12 March 1985"])
    expect(found("invoice of 12 March 1985", "DATE_OF_BIRTH")).toEqual([])
    expect(found("Passport No. X1234567", "PASSPORT")).toEqual(["X1234567"])
    expect(found("passport lost", "PASSPORT")).toEqual([])
    expect(found("btc bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "CRYPTO_WALLET")).toEqual(["bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"])
    expect(found("btc bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdx", "CRYPTO_WALLET")).toEqual([]) // bad checksum
    expect(found("eth 0x52908400098527886E0F7030069857D2E4169EE7", "CRYPTO_WALLET")).toHaveLength(1)
    expect(found(`tx 0x${"ab".repeat(32)}`, "CRYPTO_WALLET")).toEqual([])
    expect(found("db postgres://u:p@db.example.com:5432/app", "URL_CREDENTIALS")).toEqual(["postgres://u:p@db.example.com:5432"])
    expect(found("see https://example.com:443/x", "URL_CREDENTIALS")).toEqual([])
  })
})

describe("engine portability", () => {
  it("imports nothing from node: in sdks/typescript/src/tokeniser, so it runs in Deno and browsers", () => {
    const root = new URL("../../../../sdks/typescript/src/tokeniser/", import.meta.url).pathname
    const files: Array<string> = []
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (statSync(path).isDirectory()) walk(path)
        else if (path.endsWith(".ts")) files.push(path)
      }
    }
    walk(root)
    expect(files.length).toBeGreaterThan(20)
    for (const f of files) expect(readFileSync(f, "utf8"), f).not.toMatch(/from\s+["']node:|require\(/)
  })
})
