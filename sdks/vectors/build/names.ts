// tokeniser-names.json: what the engine detects with the built-in name model on (the portable name model,
// sdks/vectors/name-model.json) in a fixed multilingual set that exercises each of its rules and the person-like words
// it must leave alone. Generated from the reference engine: every engine (TypeScript, Python, Rust and the bindings
// over its C ABI) must find exactly these spans.
import { createSession } from "../../typescript/src/tokeniser/session.ts"
import { detectSpans } from "../../typescript/src/tokeniser/tokeniseText.ts"

const TEXTS: ReadonlyArray<readonly [string, string]> = [
  // Known given names pulling in surnames, particles, hyphenated parts and place words that are surnames.
  ["en", "The tenant, James Wilson, paid late again; Jean-Baptiste Lemaire-Dufour signed with Ludwig van der Heyden."],
  ["fr", "Sophie Martin habite à Bordeaux. Cordialement,\nInès Le Goff"],
  ["de", "Die Erstattung geht an Heinrich Baumgartner. Sehr geehrte Frau Oberhuber, danke."],
  ["es", "Transferencia a nombre de Itziar Goikoetxea; la Sra. de la Fuente firmó."],
  ["nl", "Het BSN van Jeroen de Wit is bekend. Groeten van Wietske Hoekstra en Anne-Fleur de Jong."],
  // Greetings, chat speakers, lone given names mid-sentence and after possessive words, quoted values.
  ["en", "Hi Marloes,\n\nI spoke with Ingrid yesterday.\n\nThanks,\nSjoerd"],
  ["fr", "Numéro de sécurité sociale de Camille : voir plus bas.\n[09:14] Femmetje: ok\n[09:15] Wietske: top"],
  ["en", "INSERT INTO customers VALUES (\"Thomas\", 42); Brands: Johnson & Johnson, Procter & Gamble."],
  // Labelled fields: table headers, JSON and YAML keys (one word, camelCase, snake_case), mail headers, CJK labels.
  ["en", "{\"firstname\": \"Mei\", \"lastName\": \"Okonkwo\", \"status\": \"Active\", \"city\": \"Leeds\"}"],
  ["fr", "nom_titulaire;ville\nAmélie Garnier;Lyon\nThéo Lambert;Nantes"],
  ["en", "From: \"Beatriz Casares\" <bcasares@example.es>\nSubject: factura\n\n联系人：王伟，电话 见下"],
  // Signatures after a sign-off or a -- delimiter, names in no list included; introducing phrases.
  ["de", "Mit freundlichen Grüßen\nAnneliese Brandenstein\nVertrieb"],
  ["en", "--\nGrace Ashworth\nHead of Finance\n\nHi, this is Mei Okafor. Ask Dr. Chen about it."],
  ["nl", "Overboeking t.n.v. Thijs van der Linden.\n\nMet vriendelijke groet,\nFloor de Wit"],
  // Ambiguous given names: a name before a known surname, a thing before an ordinary word.
  ["en", "Grace Murphy and Elizabeth Warren debated; Paris Hilton is in this sentence."],
  // A possessive ends a name; an ambiguous given name before an unknown word in the possessive, or particles and a surname.
  ["en", "Chloe Okafor's Social Security number is pending; Grace Ashworth's file too."],
  ["nl", "Floor de Vries belt morgen terug over de Grace Period."],
  ["en", "Say hello to Ada Lovelace.\n- Comment (Grace Hopper, 2026-01-02): check the Summer Sale prices."],
  // Person-like words that are not people (hard negatives).
  ["en", "The Grace Period ends on Friday. An Amber Alert was issued. Crystal Palace won again. She painted it Olive Green."],
  ["en", "We parked near Victoria Station; Sydney Opera House tickets are sold out; Hope Street is closed. Mark the date!"],
  ["en", "Upgrade to Ruby 3.3 and Python 3.12. Austin and Dallas offices will close. The Chase Bank branch closed."],
  ["fr", "La Rochelle est une belle ville; Paris Saint-Germain a gagné; Saint-Étienne et San Sebastián aussi."],
  ["de", "Die Firma Engel & Völkers verkauft Häuser. Das Hotel Adler liegt an der Rosa-Luxemburg-Straße."],
  ["en", "We flew from Florence to Charlotte via Jackson in May. Ask the Baker or the Carpenter on site."],
  // Names beside structured identifiers: each keeps its own span.
  ["es", "Número de pasaporte de Lucía: X1234567. Escríbeme a lucia.garcia@ejemplo.es."]
]

export const buildNameVectors = async () => {
  const cases = []
  for (const [language, text] of TEXTS) {
    if (/[\ud800-\udfff]/.test(text)) throw new Error("vector texts stay in the BMP so UTF-16 and code point offsets agree")
    const spans = await detectSpans(text, createSession())
    cases.push({ language, text, spans: spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: text.slice(s.start, s.end) })) })
  }
  return {
    description:
      "Detected spans on a fixed multilingual set (en, fr, de, es, nl) with the built-in name model on: the portable name model (sdks/vectors/name-model.json) beside the structured detectors. The texts exercise each name rule (gazetteer names and whole-name expansion, particles, titles, greetings, chat speakers, lone names, quoted values, labelled fields and JSON keys, mail headers, signatures, introducing phrases, ambiguous given names) and person-like words that must stay untouched. Offsets as in tokeniser-spans.json (UTF-16 code units, equal to code points here). Generated from the reference engine: an SDK's engine must find exactly these.",
    version: 1,
    engine_settings: { names: "builtin", phone_regions: ["US", "GB", "FR", "DE", "ES", "NL"] },
    cases
  }
}
