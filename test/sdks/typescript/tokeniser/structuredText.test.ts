import { describe, expect, it } from "vitest"
import { fieldsOf } from "../../../../sdks/typescript/src/tokeniser/detectors/fields.ts"
import { kindOfLabel } from "../../../../sdks/typescript/src/tokeniser/detectors/fieldKinds.ts"
import { detectStructured, type EntityType } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const found = (text: string, type?: EntityType): Array<string> =>
  detectStructured(text)
    .filter((s) => type === undefined || s.type === type)
    .map((s) => text.slice(s.start, s.end))
const typed = (text: string): Array<string> => detectStructured(text).map((s) => `${s.type}:${text.slice(s.start, s.end)}`)

describe("reading structure: a column header or key is a cue", () => {
  it("reads CSV, TSV, semicolon and markdown tables with headers, JSON, YAML, key=value and form fields", () => {
    const fields = (text: string) => fieldsOf(text).map((f) => `${f.label}=${text.slice(f.start, f.end)}`)
    expect(fields('ip,user\n203.0.113.77,"svc, backup"')).toEqual(["ip=203.0.113.77", "user=svc, backup"])
    expect(fields("name\tssn\nAnn Lee\t250577909")).toEqual(["name=Ann Lee", "ssn=250577909"])
    expect(fields("| Name | DOB |\n|---|---|\n| Ann | 1990-01-02 |")).toEqual(["Name=Ann", "DOB=1990-01-02"])
    expect(fields('{"birth_date": "1991-07-30", "n": 4}')).toEqual(["birth_date=1991-07-30", "n=4"])
    expect(fields("- name: Ann\n  phone: \"+353 87 214 9960\"")).toEqual(["name=Ann", "phone=+353 87 214 9960"])
    expect(fields('kyc dob=1968-12-01 customer="Ingrid Solberg"')).toEqual(["dob=1968-12-01", "customer=Ingrid Solberg"])
    expect(fields("Geburtsdatum: 23.09.1961\nTEL;TYPE=cell:+49 171 2345678")).toEqual(["Geburtsdatum=23.09.1961", "TEL;TYPE=cell=+49 171 2345678"])
    // Pretty-printed JSON lines end in commas, but are not a table.
    expect(fields('{\n  "ip_address": "172.25.24.225",\n  "name": "Ann",\n}')).toEqual(["ip_address=172.25.24.225", "name=Ann"])
    // A sentence before a colon is not a form label.
    expect(fields("Ticket from jane@example.com: call me")).toEqual([])
  })

  it("understands labels in English, French, German, Spanish and Dutch, in any case style", () => {
    for (const label of ["dob", "birthDate", "birth_date", "Date de naissance", "né le", "Geburtsdatum", "geb.", "Geb.-Datum", "fecha_nacimiento", "F. nacimiento", "geboortedatum"]) {
      expect(kindOfLabel(label), label).toBe("dob")
    }
    for (const label of ["passport_no", "N° de passeport", "Reisepass-Nr.", "pass_nr", "Nº de pasaporte", "paspoortnummer"]) expect(kindOfLabel(label), label).toBe("passport")
    for (const label of ["last_login_ip", "remote_addr", "Adresse IP", "IP-Adresse", "dirección IP"]) expect(kindOfLabel(label), label).toBe("ip")
    for (const label of ["order_no", "Bestellnummer", "Nº de pedido", "factuur", "amount"]) expect(kindOfLabel(label), label).toBe("reference")
  })

  it("values under telling headers: IPs, birth dates, bare SSNs, passports", () => {
    expect(found("ip,user,bytes\n203.0.113.77,svc,18234\n198.51.100.4,web,99120", "IPV4")).toEqual(["203.0.113.77", "198.51.100.4"])
    expect(found("id;birth date;city\n4411;1979-03-14;Lyon\n4412;02/11/1984;Nantes", "DATE_OF_BIRTH")).toEqual(["1979-03-14", "02/11/1984"])
    expect(found("name\tssn\nHarold Finch\t250577909\nLionel Fusco\t512346789", "US_SSN")).toEqual(["250577909", "512346789"])
    expect(found('{"user": {"birth_date": "1991-07-30", "last_login_ip": "81.2.69.160"}}')).toEqual(["1991-07-30", "81.2.69.160"])
    expect(found("2026-05-01T09:12:44Z kyc dob=1968-12-01 passport=C01X00T47 pass_nr=YSD724422")).toEqual(["1968-12-01", "C01X00T47", "YSD724422"])
    expect(found("| Name | Passport |\n|---|---|\n| Ann | 02VE88553 |", "PASSPORT")).toEqual(["02VE88553"])
  })

  it("the same values without a telling label stay readable", () => {
    expect(found("id,created,bytes\n4411,1979-03-14,18234\n4412,1984-02-11,99120")).toEqual([])
    expect(found("order_no,amount\n4267292958684261,12.50\n5350778031907971,3.10")).toEqual([])
    expect(found('{"nº_de_pedido": "4267292958684261"}')).toEqual([])
    // A cue at the end of a header row does not reach into the next row's first cell.
    expect(found("créé le,nom,né le\n2026-03-08,Léa,11/03/1944", "DATE_OF_BIRTH")).toEqual(["11/03/1944"])
  })
})

describe("multilingual cues", () => {
  it("birth-date cues: né/née le, nacido/a el, geb., geb. am, geboren op", () => {
    expect(found("Mme Aubert, née le 3 mai 1957 à Brest", "DATE_OF_BIRTH")).toEqual(["3 mai 1957"])
    expect(found("D. Ramón, nacido el 12/04/1975", "DATE_OF_BIRTH")).toEqual(["12/04/1975"])
    expect(found("La paciente, nacida el 5 de marzo de 1988", "DATE_OF_BIRTH")).toEqual(["5 de marzo de 1988"])
    expect(found("Heinrich Baumgartner, geb. 23.09.1961", "DATE_OF_BIRTH")).toEqual(["23.09.1961"])
    expect(found("Frau K. (geb. am 1. März 1990) hat angerufen", "DATE_OF_BIRTH")).toEqual(["1. März 1990"])
  })

  it("passport cues: Reisepass-Nr., N° de passeport, paspoortnummer, a cue earlier in the sentence", () => {
    expect(found("Reisepass-Nr. C01X00T47, wohnhaft in Köln", "PASSPORT")).toEqual(["C01X00T47"])
    expect(found("N° de passeport 12AB34567", "PASSPORT")).toEqual(["12AB34567"])
    expect(found("Número de pasaporte de Lucía: XDB123456.", "PASSPORT")).toEqual(["XDB123456"])
    expect(found("The pass is valid until 2027, code AB12CD34", "PASSPORT")).toEqual([])
  })

  it("IPv4 after French, German, Spanish and Dutch words for 'from' and log-in", () => {
    expect(found("Inlogpoging vanaf 192.168.158.127 voor x", "IPV4")).toEqual(["192.168.158.127"])
    expect(found("Anmeldung von 10.5.111.232 blockiert", "IPV4")).toEqual(["10.5.111.232"])
    expect(found("Connexion suspecte depuis 81.2.69.160", "IPV4")).toEqual(["81.2.69.160"])
  })
})

describe("national identifiers with check digits", () => {
  it("Swiss AHV (EAN-13), Belgian national number (mod 97), Italian codice fiscale, Finnish HETU: taken without a cue", () => {
    expect(found("756.2856.0801.39", "NATIONAL_ID")).toEqual(["756.2856.0801.39"])
    expect(found("756.2856.0801.38", "NATIONAL_ID")).toEqual([])
    expect(found("carte 04.03.13-687.27", "NATIONAL_ID")).toEqual(["04.03.13-687.27"])
    expect(found("carte 04.03.13-687.28", "NATIONAL_ID")).toEqual([])
    expect(found("CF ZSZZMF85D22F893I ok", "NATIONAL_ID")).toEqual(["ZSZZMF85D22F893I"])
    expect(found("ZSZZMF85D22F893J", "NATIONAL_ID")).toEqual([])
    expect(found("HETU 090751-497M", "NATIONAL_ID")).toEqual(["090751-497M"])
    expect(found("090751-497N", "NATIONAL_ID")).toEqual([])
  })

  it("digit-only schemes need a cue or a label: PPSN (mod 23), Steuer-ID (ISO 7064), PESEL, personnummer, CPR, Belgian plain", () => {
    expect(found("My PPSN is 7257410P", "NATIONAL_ID")).toEqual(["7257410P"])
    expect(found("PPS No: 9527846CW", "NATIONAL_ID")).toEqual(["9527846CW"])
    expect(found("My PPSN is 7257410Q", "NATIONAL_ID")).toEqual([])
    expect(found("part 7257410P", "NATIONAL_ID")).toEqual([])
    expect(found("Steuer-ID 42 760 569 315", "NATIONAL_ID")).toEqual(["42 760 569 315"])
    expect(found("Steueridentifikationsnummer: 47001256896", "NATIONAL_ID")).toEqual(["47001256896"])
    expect(found("Steuer-ID 47001256897", "NATIONAL_ID")).toEqual([])
    expect(found("PESEL: 66061407525", "NATIONAL_ID")).toEqual(["66061407525"])
    expect(found("66061407525", "NATIONAL_ID")).toEqual([])
    expect(found("Personnummer 700803-5060", "NATIONAL_ID")).toEqual(["700803-5060"])
    expect(found("CPR-nr. 280555-4579", "NATIONAL_ID")).toEqual(["280555-4579"])
    expect(found("name,rijksregisternummer\nJoris,59032039373", "NATIONAL_ID")).toEqual(["59032039373"])
  })

  it("Dutch BSN: 11-proof in the dotted 4.2.3 layout without a cue, plain under a bsn column or after a cue in the sentence", () => {
    expect(found("Mijn nummer is 4660.78.079.", "NL_BSN")).toEqual(["4660.78.079"])
    expect(found("naam,bsn\nGerrit Zwart,610906823", "NL_BSN")).toEqual(["610906823"])
    expect(found("Het BSN van Willemijn Visser is 935976279.", "NL_BSN")).toEqual(["935976279"])
    expect(found("No BSN known for 123456782", "NL_BSN")).toEqual([])
  })

  it("UK NINO in the 'AA 999999 A' layout", () => {
    expect(found("NI number JG 103759 A", "UK_NINO")).toEqual(["JG 103759 A"])
    expect(found("NI number JG 1037 59A", "UK_NINO")).toEqual([])
  })
})

describe("phones", () => {
  it("Irish, Belgian and other EU numbers; Dutch dash layouts; German mobiles 4+8", () => {
    expect(found("Call me on 087 123 4567", "PHONE")).toEqual(["087 123 4567"])
    expect(found("Téléphone : 0470 12 34 56", "PHONE")).toEqual(["0470 12 34 56"])
    expect(found("Chiamami al 333 123 4567 dopo le 18", "PHONE")).toEqual(["333 123 4567"])
    expect(found("Bel me op 06-48213975 of op kantoor 020-5302211.", "PHONE")).toEqual(["06-48213975", "020-5302211"])
    expect(found("Handy: 0172 73849201", "PHONE")).toEqual(["0172 73849201"])
    expect(found("telefone: 912 345 678", "PHONE")).toEqual(["912 345 678"])
  })

  it("a number followed directly by another digit field in a delimited row", () => {
    expect(found("name,phone,joined\nAoife,+353 87 214 9960,2021-04-03\nNiamh,+34 673 27 38 66,2019-11-20", "PHONE")).toEqual([
      "+353 87 214 9960",
      "+34 673 27 38 66"
    ])
  })

  it("a bare national mobile number with its trunk 0 needs no cue; other bare runs still do", () => {
    expect(found("Stuur het naar 0612345678 graag", "PHONE")).toEqual(["0612345678"])
    expect(found("ring 07911123456 later", "PHONE")).toEqual(["07911123456"])
    expect(found("Order 0612345678")).toEqual([])
    expect(found("id 0301234567 here")).toEqual([])
  })

  it("is not a timestamp or a reference in an order column", () => {
    expect(found("The meeting is at 2024-03-15 14:22:05 UTC.", "PHONE")).toEqual([])
    expect(found("Bestellnummer;Betrag\n0301234567;12,50\n0301234568;3,10", "PHONE")).toEqual([])
  })
})

describe("others", () => {
  it("e-mail addresses with non-ASCII local parts and domains", () => {
    expect(found("Write to josé.garcía@correo.example.es or müller@bücher.example.", "EMAIL")).toEqual(["josé.garcía@correo.example.es", "müller@bücher.example"])
  })

  it("URL credentials with an empty user", () => {
    expect(found("redis_url: redis://:Zq84KpLmN2@cache.internal:6379", "URL_CREDENTIALS")).toEqual(["redis://:Zq84KpLmN2@cache.internal:6379"])
    expect(found("see https://example.org/a:b@c", "URL_CREDENTIALS")).toEqual([])
  })

  it("a base58 address with few digits, but not a long CamelCase word after a 1", () => {
    expect(found("BTC: 1BCfFHhkGVxBwgykXFiYGHeL3V9yPmBEtn", "CRYPTO_WALLET")).toEqual(["1BCfFHhkGVxBwgykXFiYGHeL3V9yPmBEtn"])
    expect(found("Payout 3PCwMF8HoqyEawjDieQTAWxaLkuvAHeJCG ok", "CRYPTO_WALLET")).toEqual(["3PCwMF8HoqyEawjDieQTAWxaLkuvAHeJCG"])
    expect(found("1SomethingLikeThisIdentifierName", "CRYPTO_WALLET")).toEqual([])
  })
})

describe("false positives", () => {
  it("four-part version numbers after client= or after an upgrade are not addresses; real addresses there still are", () => {
    expect(typed("2026-06-02T10:00:00Z INFO session start client=4.12.0.3 ip=62.210.14.77")).toEqual(["IPV4:62.210.14.77"])
    expect(found("client=2.3.0.15 os=android-14 locale=fr_FR")).toEqual([])
    expect(found("client=84.12.9.201 status=200", "IPV4")).toEqual(["84.12.9.201"])
    expect(found("Upgraded from 7.4.18.8 to 4.29.10.86 on 2026-03-05.")).toEqual([])
  })

  it("an IBAN-shaped run with a bad check digit is consumed, not re-mined as a phone or a card", () => {
    expect(found("Rejected: IBAN DE12 3704 0044 0532 0130 00 has an invalid check digit.")).toEqual([])
    expect(found("The transfer to NL21 INGB 0001 2345 67 bounced (bad IBAN).")).toEqual([])
    expect(found("Pay DE89 3704 0044 0532 0130 00 today", "IBAN")).toEqual(["DE89 3704 0044 0532 0130 00"])
  })
})
