import { fieldAt, fieldsOf, type Field } from "./fields.ts"

/**
 * What a field label says its value is, in English, French, German, Spanish, Dutch (and the labels of
 * the national identifiers of other EU countries). A label is normalised first: `birth_date`,
 * `birthDate` and `Birth-Date` all read "birth date".
 */
export type FieldKind =
  | "dob"
  | "passport"
  | "ip"
  | "ssn"
  | "nino"
  | "bsn"
  | "phone"
  | "steuerId"
  | "ahv"
  | "beNationalNumber"
  | "ppsn"
  | "pesel"
  | "personnummer"
  | "cpr"
  | "hetu"
  | "codiceFiscale"
  | "name"
  /** A software version or client string: a four-part number here is not an address. */
  | "version"
  /** A reference number (order, invoice, id, amount...): never a card, phone or national id. */
  | "reference"

const KINDS: ReadonlyArray<readonly [FieldKind, RegExp]> = [
  ["dob", /\b(?:dob|d\.o\.b|birth ?dates?|date (?:of )?birth|birthday|born|date de naissance|date naissance|n[ée]e?(?: ?\(e\))? le|geburtsdatum|geb\.?(?: ?-? ?datum)?|geboren(?: am| op)?|fecha (?:de )?nacimiento|f\.? nacimiento|nacid[oa](?: el)?|geboortedatum|geb\. ?datum|data (?:di )?nascita|nat[oa] il)(?:$|[\s:.])/iu],
  ["passport", /\b(?:passport|passeport|reisepass|pass[ -]?(?:nr|nummer)|pasaporte|passaporto|passaporte|paspoort)/iu],
  ["ssn", /\b(?:ssn|social security)\b/iu],
  ["nino", /\b(?:nino|ni (?:number|no)|national insurance)\b/iu],
  ["bsn", /\b(?:bsn|burgerservicenummer|sofi ?-?nummer)\b/iu],
  ["steuerId", /\b(?:steuer ?-?id(?:nr)?|steuer ?-?idnr|steueridentifikationsnummer|idnr|identifikationsnummer)\b/iu],
  ["ahv", /\b(?:ahv|avs|sozialversicherungsnummer)\b/iu],
  ["beNationalNumber", /(?:rijksregister|registre national|num[ée]ro national|\bniss\b|\binsz\b)/iu],
  ["ppsn", /\b(?:ppsn?|pps (?:no|number)|personal public service)\b/iu],
  ["pesel", /\bpesel\b/iu],
  ["personnummer", /\bperson(?:nummer|nr)\b/iu],
  ["cpr", /\bcpr\b/iu],
  ["hetu", /\b(?:hetu|henkil[öo]tunnus)\b/iu],
  ["codiceFiscale", /\b(?:codice fiscale|cf)\b/iu],
  ["ip", /\b(?:ip|ipv4|ips|ip ?-?ad(?:d)?res(?:s|se)?|remote addr|addr|direcci[óo]n ip|adresse ip|ip-adres|peer)\b/iu],
  ["phone", /\b(?:phone|tel|t[ée]l|t[ée]l[ée]phone|telefon|telefoon|tel[ée]fono|telefonnummer|telefoonnummer|mobile?|mobil|mobilnummer|mobiel|m[óo]vil|cell|handy|portable|fax|gsm|contact number)\b/iu],
  ["version", /\b(?:version|versie|versi[óo]n|app version|client|user agent|agent|sdk|release|build|firmware)\b/iu],
  ["reference", /\b(?:order|orders|invoice|ref|reference|tracking|ticket|sku|ean|upc|isbn|serial|item|article|confirmation|booking|reservation|shipment|receipt|commande|facture|rechnung|bestellnummer|bestellung|auftrag|pedido|factura|bestelling|ordernummer|factuur|id|record|kundennummer|kd nr|klantnummer|n° client|nº cliente|identifiant|amount|montant|betrag|importe|bedrag|price|total|summe|pid|port|bytes|count|zip|postcode|plz)\b/iu],
  ["name", /\b(?:name|full name|first name|last name|given name|surname|customer|contact|patient|cardholder|employee|nom|pr[ée]nom|client|titulaire|vorname|nachname|familienname|kunde|kundin|karteninhaber|mitarbeiter|nombre|apellidos|cliente|titular|paciente|naam|voornaam|achternaam|klant|rekeninghouder|pati[ëe]nt|fn)\b|姓名|联系人|聯絡人|名字|氏名|名前|担当者|имя|фио|отправитель/iu]
]

const normalise = (label: string): string =>
  label
    .replace(/([\p{Ll}])(\p{Lu})/gu, "$1 $2")
    .replace(/[_]+/g, " ")
    .toLowerCase()
    .trim()

const cache = new Map<string, FieldKind | undefined>()

/** The kind of value a label announces, or undefined when it says nothing we use. */
export const kindOfLabel = (label: string): FieldKind | undefined => {
  if (cache.has(label)) return cache.get(label)
  const n = normalise(label)
  const kind = KINDS.find(([, re]) => re.test(n))?.[0]
  if (cache.size > 5000) cache.clear()
  cache.set(label, kind)
  return kind
}

/** The kind of the field containing [start, end) of `text`, if any. */
export const fieldKindAt = (text: string, start: number, end: number): FieldKind | undefined => {
  const f = fieldAt(text, start, end)
  return f === undefined ? undefined : kindOfLabel(f.label)
}

/**
 * The kind of the field whose whole value is [start, end) (give or take quotes, brackets and currency
 * signs). Used to veto a detection: an `order_no` cell that IS a Luhn-valid number is a reference, but a
 * card mentioned inside a longer "Order: ... paid with card ..." value is still a card.
 */
export const wholeValueKindAt = (text: string, start: number, end: number): FieldKind | undefined => {
  const f = fieldAt(text, start, end)
  if (f === undefined || f.end - f.start - (end - start) > 16) return undefined
  const rest = text.slice(f.start, start) + text.slice(end, f.end)
  return /^[\s"'()[\]#€$£:=.,-]*$/.test(rest) ? kindOfLabel(f.label) : undefined
}

/** The values of `text` labelled as `kind`. */
export const fieldsOfKind = (text: string, kind: FieldKind): Array<Field> => fieldsOf(text).filter((f) => kindOfLabel(f.label) === kind)

const PATTERN_OF = new Map(KINDS)

/** True when `s` (a label or the words before a value) names `kind`. */
export const mentions = (kind: FieldKind, s: string): boolean => PATTERN_OF.get(kind)!.test(normalise(s))

/**
 * True when the words before `start` on the same line, after the last digit there, name `kind`:
 * "Het BSN van Willemijn Visser is 847189533", "Número de pasaporte de Lucía: X1234567". Stopping at
 * a digit keeps a cue from reaching past another number to a later one.
 */
const NEGATION = /\b(?:no|not|without|unknown|geen|zonder|kein|keine|ohne|sans|aucun|sin|ningún)\b/i

export const mentionedBefore = (kind: FieldKind, text: string, start: number, width = 50): boolean => {
  const from = Math.max(0, start - width)
  let window = text.slice(from, start)
  const cut = Math.max(window.lastIndexOf("\n"), window.search(/\d[^\d]*$/))
  if (cut >= 0) window = window.slice(cut + 1)
  // "No BSN known for 123456782": a negated cue announces nothing.
  if (NEGATION.test(window)) return false
  return PATTERN_OF.get(kind)!.test(normalise(window))
}
