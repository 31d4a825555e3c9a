// tokeniser-spans.json: what the engine detects (names off: the structured, validated detectors only) in a fixed
// multilingual set. Generated from today's engine: later engines must find the same spans.
import { createSession } from "../../typescript/src/tokeniser/session.ts"
import { detectSpans } from "../../typescript/src/tokeniser/tokeniseText.ts"

const TEXTS: ReadonlyArray<readonly [string, string]> = [
  ["en", "Hi, I'm Jane. Mail me at jane.doe@example.com or ring +44 20 7946 0958 after 5pm."],
  ["en", "My card is 4111 1111 1111 1111 and my SSN is 536-22-1234; server at 192.168.10.42."],
  ["en", "Wire it to GB82 WEST 1234 5698 7654 32 and send the receipt to billing@example.co.uk."],
  ["fr", "Bonjour, écrivez à marie.curie@exemple.fr ou appelez le 06 12 34 56 78, merci."],
  ["fr", "Mon numéro de sécurité sociale est 2 84 12 75 123 456 87 et mon IBAN FR14 2004 1010 0505 0001 3M02 606."],
  ["de", "Grüße! Meine E-Mail ist hans.mueller@beispiel.de, Telefon 030 12345678."],
  ["de", "Bitte überweisen Sie auf DE89 3704 0044 0532 0130 00 bis Freitag."],
  ["es", "Hola, mi DNI es 12345678Z y mi correo es lucia.garcia@ejemplo.es."],
  ["es", "Llámame al +34 612 34 56 78; nací el 14/03/1985 en Sevilla."],
  ["nl", "Mijn BSN is 111222333 en mijn e-mailadres is jan.jansen@voorbeeld.nl."],
  ["nl", "Bel me op 06 12345678 of maak over naar NL91 ABNA 0417 1643 00."],
  ["en", "Nothing personal here: the meeting is at 10:30 in room 4B, version 2.4.1."],
  // IPv4 in logs and URLs, announced by the shape rather than a word; and the versions those shapes must not take.
  ["en", "2026-11-28T08:00:01Z 10.32.69.1 GET /index.html 200\nX-Forwarded-For: 203.0.113.9, 10.0.0.2\nOpen https://192.168.1.10/admin or ssh://deploy@10.0.0.5/repo"],
  ["en", "2026-11-28 4.2.0.1 released\n[08:00:01] 1.2.3.4 done\nDocs at https://example.com/v/1.2.3.4/ and OID 1.3.6.1."],
  // A network range in CIDR notation (host bits all zero) names no device; an interface's address with its prefix does.
  ["en", "Firewall: allow 192.168.0.0/16 and 10.0.0.0/8 from the VPN; the host is inet 10.0.0.5/24, peer 100.64.0.1/10, single 203.0.113.7/32."],
  // IPv6: short compressed forms only where an address is announced (code slices and scopes are not); long forms anywhere.
  ["en", "inet6 fe80::1/64 scope link\nGET http://[2001:db8::7]:8080/health from 2001:db8:85a3::8a2e:370:7334\nslice a[::2] or arr[1::3]; dead::beef; MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48; 00:1a:2b:3c:4d:5e at 14:22:05"],
  // Dates of birth: more layouts and languages, the cue after the date; an identity document's other dates and a project's "birth" stay.
  ["en", "I was born on the 14th of March 1985; Ann's birthday is 12-Jun-1963.\nBirthdate: 1960/06/24\nDate of issue: 21 SEP 2019\nDate of expiry: 9th June 2029"],
  ["fr", "Il est né le 1er mars 1984 à Lyon. Le projet est né le 6 mai 2019 d'une idée simple."],
  ["de", "Sophie wurde am 13. August 1989 in Graz geboren; Nuria nació el 8 de julio de 1978."],
  ["it", "{\"data_nascita\": \"26 febbraio 2000\", \"joined\": \"2026-07-13\"}\nGiulia Rossi, nata il 3 marzo 1990."],
  // Passports: German "Passnummer", Portuguese "passaporte"; a boarding pass and a password are not passports.
  ["de", "Lena Becker, Passnummer WX176768. Passaporte n.º N123456 emitido em Lisboa. Boarding pass BP123456; Passwort AB123456."],
  // National ids: "personnr" names a Swedish personnummer; NINO- and DNI-shaped serial and order numbers stay.
  ["en", "Thomas's personnr is 871118-9194. Serial ZM452778C replaced; NI number ZM452778C.\nPedido 12345678Z enviado; DNI 12345678Z."],
  // IPv4 announced by network nouns in the plural and in other languages.
  ["fr", "Merci d'autoriser 27.16.118.202 sur le pare-feu. De inlogpogingen kwamen van 172.19.53.60. Gli accessi falliti arrivavano da 10.1.2.3; version 1.2.3.4."],
  // Machine-readable zones (ICAO 9303 specimens): a passport (TD3) on two lines, an identity card (TD1) on three, a
  // visa-sized TD2 as OCR joins it on one line; then a TD3 whose number and birth date were changed (two field checks and the composite fail: not a zone).
  ["en", "Scanned passport:\nP<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10\nCard:\nI<UTOD231458907<<<<<<<<<<<<<<<\n7408122F1204159UTO<<<<<<<<<<<6\nERIKSSON<<ANNA<MARIA<<<<<<<<<<"],
  ["en", "OCR: I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<< D231458907UTO7408122F1204159<<<<<<<6\nNot a zone: P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898903C36UTO7408132F1204159ZE184226B<<<<<10"]
]

export const buildTokeniserVectors = async () => {
  const cases = []
  for (const [language, text] of TEXTS) {
    if (/[\ud800-\udfff]/.test(text)) throw new Error("vector texts stay in the BMP so UTF-16 and code point offsets agree")
    const spans = await detectSpans(text, createSession({ names: "off" }))
    cases.push({ language, text, spans: spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: text.slice(s.start, s.end) })) })
  }
  return {
    description:
      "Detected spans on a fixed multilingual set (en, fr, de, es, nl) with the name model off: only the structured, validated detectors (e-mail, phone in US/GB/FR/DE/ES/NL national formats and international form, card, IBAN, national ids, IP addresses, dates of birth, ...). `start`/`end` are offsets into `text` (end exclusive); every text is within the Basic Multilingual Plane, so UTF-16 code unit and code point offsets are the same. Spans are non-overlapping, in text order, with `type` the alias category. Generated from the reference engine: an SDK's engine must find exactly these.",
    version: 1,
    engine_settings: { names: "off", phone_regions: ["US", "GB", "FR", "DE", "ES", "NL"] },
    cases
  }
}
