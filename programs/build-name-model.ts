/**
 * Builds sdks/vectors/name-model.json: the data of the portable name model every engine reads (TypeScript
 * names/nameModel.ts, Python tokeniser/names, Rust tokeniser/names.rs). Three sources:
 *  - lexicon.faker: given names, surnames, the place and calendar words that are also names, from the person,
 *    location and date definitions of @faker-js/faker 10.6.0 (33 locales). faker is not a dependency: pass its
 *    extracted package (`npm pack @faker-js/faker@10.6.0 && tar xzf faker-js-faker-10.6.0.tgz`) as
 *    `--faker package/dist/index.js`; without it the faker section already in the file is kept as it is.
 *  - lexicon.compromise: the names compromise knows (its lexicon's MaleName, FemaleName, FirstName, LastName and
 *    one-word Person entries: what compromise contributed to the old built-in model), and the "ambiguous" words:
 *    names that compromise's lexicon also lists as an ordinary word (a noun, verb, adjective, month, city...), and
 *    a hand-written list of the same kind (Mark, Grace, Jordan, Tesla): never a name by themselves; and
 *    common_words, ordinary English words (to tell "Grace Callaghan" from "Grace Period").
 *  - cues (written here, per language): titles, greetings, sign-offs, phrases that introduce a person, particles,
 *    stop words, labels of name fields (table headers, JSON keys, form labels) and of fields that never hold one.
 *  - lexicon.dictionary: the lower-case words of an English word list (Debian's wamerican-small,
 *    /usr/share/dict/american-english-small; `apt-get install wamerican-small`), passed as `--dictionary <path>`;
 *    without it the section already in the file is kept. After an ambiguous given name, an ordinary word makes a
 *    thing ("Summer Sale", "Crystal Palace"), and a given name that is an ordinary word is never a name alone.
 * Run: node programs/build-name-model.ts [--faker <faker package/dist/index.js>] [--dictionary <word list>]
 *      (then review the diff)
 *      node programs/build-name-model.ts --check                                  (exits 1 if the file differs)
 */
import { readFileSync, writeFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import nlp from "compromise"

const target = new URL("../sdks/vectors/name-model.json", import.meta.url)
const argv = process.argv.slice(2)
const fakerPath = argv.includes("--faker") ? argv[argv.indexOf("--faker") + 1] : undefined
const dictionaryPath = argv.includes("--dictionary") ? argv[argv.indexOf("--dictionary") + 1] : undefined
const check = argv.includes("--check")

const LOCALES = ["en", "en_GB", "en_IE", "en_US", "en_AU", "en_CA", "fr", "fr_BE", "fr_CH", "de", "de_AT", "de_CH", "es", "es_MX", "nl", "nl_BE", "it", "pt_PT", "pt_BR", "pl", "sv", "da", "nb_NO", "fi", "cs_CZ", "sk", "hu", "ro", "hr", "ru", "uk", "el", "tr"]
const NAME_WORD = /^\p{Lu}[\p{L}\p{M}'’-]+$/u
const sorted = (s: Iterable<string>) => [...new Set(s)].sort()

interface FakerSection {
  readonly source: string
  readonly given: ReadonlyArray<string>
  readonly surnames: ReadonlyArray<string>
  readonly places: ReadonlyArray<string>
  readonly calendar: ReadonlyArray<string>
}

const fakerSection = async (): Promise<FakerSection> => {
  if (fakerPath === undefined) {
    const previous = JSON.parse(readFileSync(target, "utf8")) as { lexicon: { faker: FakerSection } }
    return previous.lexicon.faker
  }
  const { allLocales } = (await import(pathToFileURL(fakerPath).href)) as { allLocales: Record<string, any> }
  const flat = (v: unknown): Array<string> =>
    v === undefined || v === null ? [] : Array.isArray(v) ? v.flatMap(flat) : typeof v === "object" ? Object.values(v).flatMap(flat) : typeof v === "string" ? [v] : []
  const given = new Set<string>()
  const surnames = new Set<string>()
  const places = new Set<string>()
  const calendar = new Set<string>()
  for (const code of LOCALES) {
    const locale = allLocales[code]
    if (locale === undefined) continue
    for (const n of flat(locale.person?.first_name)) if (NAME_WORD.test(n)) given.add(n)
    for (const n of flat(locale.person?.last_name)) if (NAME_WORD.test(n)) surnames.add(n)
    for (const n of [...flat(locale.location?.city_name), ...flat(locale.location?.country), ...flat(locale.location?.state)]) if (NAME_WORD.test(n)) places.add(n)
    for (const n of [...flat(locale.date?.month), ...flat(locale.date?.weekday)]) calendar.add(n.toLowerCase())
  }
  // Only the places and calendar words that are also names matter (the ambiguous ones: "Florence", "April").
  const isName = (w: string) => given.has(w) || surnames.has(w)
  return {
    source: `@faker-js/faker 10.6.0 (locales: ${LOCALES.join(", ")})`,
    given: sorted(given),
    surnames: sorted(surnames),
    places: sorted([...places].filter(isName)),
    calendar: sorted([...calendar].filter((c) => isName(c[0]!.toUpperCase() + c.slice(1))))
  }
}

interface DictionarySection {
  readonly source: string
  readonly words: ReadonlyArray<string>
}

const dictionarySection = (faker: FakerSection): DictionarySection => {
  if (dictionaryPath === undefined) {
    const previous = JSON.parse(readFileSync(target, "utf8")) as { lexicon: { dictionary: DictionarySection } }
    return previous.lexicon.dictionary
  }
  // Only plain lower-case words (no possessives, no proper nouns) of three letters or more that are no surname.
  const surnames = new Set(faker.surnames.map((w) => w.toLowerCase()))
  const words = readFileSync(dictionaryPath, "utf8")
    .split("\n")
    .filter((w) => /^[a-z]{3,}$/.test(w) && !surnames.has(w))
  return { source: "wamerican-small 2020.12.07-2 (Debian), lower-case words that are no surname", words: sorted(words) }
}

const compromiseSection = (faker: FakerSection, dictionary: DictionarySection) => {
  const lexicon = (nlp as unknown as { world: () => { model: { one: { lexicon: Record<string, string | Array<string>> } } } }).world().model.one.lexicon
  const version = (JSON.parse(readFileSync(new URL("../node_modules/compromise/package.json", import.meta.url), "utf8")) as { version: string }).version
  const capitalise = (w: string) => w.replace(/(^|[-'’])(\p{Ll})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase())
  const given = new Set<string>()
  const surnames = new Set<string>()
  const ambiguous = new Set<string>()
  const words = new Map<string, string>()
  for (const [word, tags] of Object.entries(lexicon)) {
    const tag = Array.isArray(tags) ? tags[0]! : tags
    if (!/^[\p{Ll}][\p{Ll}'’-]*$/u.test(word)) continue
    words.set(word, tag)
    const name = capitalise(word)
    if (tag === "MaleName" || tag === "FemaleName") given.add(name)
    else if (tag === "LastName") surnames.add(name)
    else if (tag === "FirstName" || tag === "Person") given.add(name)
  }
  // A known name that is also an ordinary word (a noun, verb, adjective, month, city, country...).
  const NAME_TAGS = new Set(["MaleName", "FemaleName", "FirstName", "LastName", "Person"])
  for (const name of [...faker.given, ...faker.surnames, ...given, ...surnames]) {
    const tag = words.get(name.toLowerCase())
    if (tag !== undefined && !NAME_TAGS.has(tag)) ambiguous.add(name)
  }
  for (const w of EXTRA_AMBIGUOUS) ambiguous.add(w)
  // A given name that is an ordinary English word ("Rose", "Hope", "Grace", "Summer").
  const dictionaryWords = new Set(dictionary.words)
  for (const name of [...faker.given, ...given]) if (dictionaryWords.has(name.toLowerCase())) ambiguous.add(name)
  // Ordinary English words (nouns, adjectives, verbs): after an ambiguous given name, one of these makes a thing
  // ("Grace Period", "Rose Garden", "Amber Alert"), not a person.
  const COMMON_TAGS = new Set(["Singular", "Noun", "Uncountable", "Plural", "Adjective", "Infinitive", "PresentTense", "PastTense", "Gerund", "Comparative", "Superlative", "Actor", "Adverb", "Place", "City", "Country", "Region", "Organization", "SportsTeam", "Demonym", "Unit", "Currency"])
  const namesLower = new Set([...faker.given, ...faker.surnames, ...given, ...surnames].map((w) => w.toLowerCase()))
  const common = [...words].filter(([w, tag]) => COMMON_TAGS.has(tag) && !namesLower.has(w) && !w.includes(" ")).map(([w]) => w)
  return { source: `compromise ${version} lexicon`, given: sorted(given), surnames: sorted(surnames), ambiguous: sorted(ambiguous), common_words: sorted(common) }
}

/** Names that are also everyday words compromise lists as names only (so the rule above cannot see them). */
const EXTRA_AMBIGUOUS = "Bill Will Mark Rose Grace Hope Faith Joy Pat Art Sue Rob Jack Frank Ray Guy Dean Gene Chase Hunter Summer Autumn Dawn Eve Iris Lily Daisy Violet Olive Ruby Amber Jade Pearl Crystal Holly Ivy Heather Sky Rain Storm River Brook Cliff Glen Dale Wood Forest Miles Max Sterling Bond Cash Penny Buck Drew Lane Young Price Rich Bush Page Paige Tanner Church Marsh Bank Banks Field Fields Bell Brown Green White Black Gray Grey Long Short Little Small Strong Sharp Wise Gay Best Noble Royal King Prince Duke Earl Bishop Pope Law Love Hall Street Ford Lincoln Chevrolet Dodge Tesla Mercedes Porsche Ferrari Chanel Dior Gucci Prada Vans Nike Adidas Puma Disney Marvel Apple Amazon Oracle Java Python Ruby Rust Swift Go Julia Dart Kotlin Scala Elixir Haskell Pascal Ada Delphi Perl Lua Crystal Nova Vega Orion Atlas Apollo Mercury Venus Mars Jupiter Saturn Neptune Pluto Luna Sol Stella Aurora Phoenix Angel Christian Nat Bob Abbey Sunny Jordan Victoria Sydney Austin Paris Florence Georgia Virginia Carolina Dallas Houston Lincoln Madison Jackson Washington Orlando Savannah Chelsea Brooklyn Camden Devon Kent Logan Warren Hudson Dakota Cheyenne Phoenix Aspen Boston Denver Eugene Lorraine Lourdes Regina Adelaide".split(" ")

/**
 * Frequent given names and surnames per language that neither faker nor compromise lists (written from the
 * countries' published top-name tables, not from any evaluation set): a name this common must not depend on
 * context to be found.
 */
const FREQUENT_NAMES = {
  given: {
    nl: "Jeroen Willemijn Thijs Sanne Joost Bram Floor Maarten Marieke Lieke Koen Wouter Ruud Sjoerd Hendrik Geert Gerrit Joris Niels Pieter Ilse Anouk Fleur Roos Marloes Janneke Esther Jeltje Wiebe Sietske Hidde Mees Teun Stijn Jesse Ties Daan Lotte Femke Eline Maud Noor Tess Jip Guus Siem",
    de: "Jürgen Jörg Uwe Dieter Torsten Knut Kai Ute Jutta Heike Anke Silke Dörte Wiebke Frauke Birgit Sabine Gudrun Hannelore Lieselotte Ottilie Wolfgang Florian Maximilian Lukas Katharina Johanna Sebastian Tobias Jannik Malte Lennart Finnja Merle Mareike Svenja",
    fr: "Inès Clémence Margaux Chloé Hélène Solène Maëlle Océane Gwenaëlle Yannick Guillaume Sébastien Thibault Théo Loïc Gaëtan Ludovic Aurélien Baptiste Corentin Enzo Maxime Mathis Noémie Anaïs Apolline Capucine Bérénice Eloïse",
    es: "Ainhoa Montserrat Nuria Consuelo Rocío Pilar Itziar Aitor Iker Unai Iñaki Jordi Xavier Begoña Amaia Leire Nerea Maite Mireia Álvaro Íñigo Gonzalo Rodrigo Alejandro Sergio Lucía Sofía Paula Marta Carmen",
    en: "Siobhan Declan Niamh Aoife Ciaran Eoin Oisin Saoirse Ruairí Gareth Rhys Dafydd Sian Bethan Hamish Fiona Callum Ewan Kirsty Morag Mei Priya Tariq Imran Aisha Yusuf"
  },
  surnames: {
    nl: "Kuipers Wit Visser Smit Bakker Janssen Jansen Willems Hoogendoorn Linden Berg Vries Dijk Meijer Mulder Bos Vos Peters Hendriks Dekker Brouwer Dijkstra Koster Prins Huisman Kok Postma Boer Groot Veenstra Vermeulen Maas Schouten Verhoeven Jacobs",
    de: "Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Koch Richter Klein Wolf Schröder Neumann Schwarz Zimmermann Braun Krüger Hofmann Hartmann Lange Werner Krause Lehmann Köhler",
    fr: "Martin Bernard Dubois Thomas Robert Richard Petit Durand Leroy Moreau Simon Laurent Lefebvre Michel Garcia Garnier Faure Rousseau Blanc Guerin Muller Henry Roussel Nicolas Perrin Morin Mathieu Clement Gauthier Dumont Lopez Fontaine Chevalier Robin Goff Lemaire Dufour",
    es: "García Fernández González Rodríguez López Martínez Sánchez Pérez Gómez Martín Jiménez Ruiz Hernández Díaz Moreno Muñoz Álvarez Romero Alonso Gutiérrez Navarro Torres Domínguez Vázquez Ramos Gil Ramírez Serrano Blanco Molina Morales Suárez Ortega Delgado Castro Ortiz Rubio Marín Sanz Iglesias Fuente",
    en: "Sutherland McLeod MacLeod Patel Nguyen Murphy Kelly Byrne Ryan Doyle McCarthy Gallagher Doherty Kennedy Lynch Murray Quinn Moore McLoughlin Brennan Briain"
  }
}

/**
 * Cue words per language (en, fr, de, es, nl; it and pt where the corpus families need them), lower case.
 * A multi-word cue is matched word for word ("on behalf of").
 */
const CUES = {
  /** Titles before a name; the title itself stays readable. */
  titles: {
    en: "mr mrs ms mx dr prof sir dame miss",
    fr: "m mme mlle monsieur madame mademoiselle me maître",
    de: "herr herrn frau fräulein",
    es: "señor señora señorita sr sra srta don doña dra dña",
    nl: "meneer mevrouw mevr dhr mw heer",
    it: "signor signora sig"
  },
  /** Words that greet or thank someone: the next capitalised word is a name even when it stands alone. */
  greetings: {
    en: "hi hello hey dear thanks thank cheers bye",
    fr: "bonjour salut cher chère coucou merci",
    de: "hallo liebe lieber danke servus grüße gruß tag morgen abend",
    es: "hola querida querido estimado estimada gracias saludos",
    nl: "hoi beste dag bedankt groeten groet",
    it: "ciao cara caro grazie"
  },
  /** The last words before a signature: a given name alone on the next line is the writer's. */
  sign_offs: {
    en: "thanks cheers regards best wishes sincerely",
    fr: "merci cordialement salutations bien à vous amitiés",
    de: "danke grüße grüßen gruß mfg",
    es: "gracias saludos atentamente un abrazo",
    nl: "bedankt groeten groet"
  },
  /** Phrases after which capitalised words are a person's name ("t.n.v. Thijs van der Linden", "this is Mei Okafor"). */
  introducers: {
    en: "on behalf of|account holder|holder|signed by|greetings from|this is|my name is|i am|i'm|name is|contact person|spoke with|spoke to|talked to|met with|assigned to|approved by|reported by|referred by|forward this to",
    fr: "au nom de|de la part de|pour le compte de|titulaire|signé par|signée par|amitiés de|je suis|je m'appelle|mon nom est|c'est",
    de: "im namen von|namens|kontoinhaber|kontoinhaberin|unterzeichnet von|grüße von|grüßen von|ich bin|ich heiße|mein name ist|hier ist|ansprechpartner|ansprechpartnerin",
    es: "a nombre de|en nombre de|a la cuenta de|titular|firmado por|firmada por|saludos de|soy|me llamo|mi nombre es|le saluda",
    nl: "t.n.v.|ten name van|namens|groeten van|groet van|ik ben|mijn naam is|hier is|rekeninghouder"
  },
  /** Words that link a noun to its owner, after which a lone known given name is a person ("de Camille :", "van Ilse"). */
  possessive_links: {
    en: "of for to with from by",
    fr: "de d' pour avec par à chez",
    de: "von für mit an bei",
    es: "de para con por a",
    nl: "van voor met aan bij door"
  },
  /** Particles inside names: "Ludwig van der Heyden", "María de la Fuente", "Inès Le Goff", "Ruairí Ó Briain". */
  particles: "van der den de del della la le du des von vom zu ten ter te da di dos das y bin ibn al st ó ní mac",
  /** Particles that may be capitalised inside a name when a capitalised word follows ("Le Goff", "Van Dijk", "Ó Briain"). */
  capitalised_particles: "le la van von de di da del ó ní mac",
  /** Capitalised words that start sentences, address people or name things, and are never names by themselves. */
  stop_words: {
    en: "the this that these those and or but if in on at for from to with by of as is are was be it its he she we they you your our my his her their subject re fwd fw cc date sent best kind regards sincerely yours team support customer client patient name sir madam",
    fr: "le la les un une des et ou mais pour avec dans sur par bonjour madame monsieur merci cordialement ville nom prénom titulaire vous nous",
    de: "der die das ein eine und oder aber mit von für auf bei grüße viele beste freundlichen stadt ort vorname nachname kunde sie ihr ich du wir tag guten",
    es: "el los las una y o pero con para por en saludos un ciudad nombre apellidos cliente usted",
    nl: "het een en maar met voor op bij groeten vriendelijke plaats naam voornaam achternaam klant ik wij jij",
    brands: "ford dell philips siemens bosch porsche renault heineken zara carrefour ferrari chanel disney boeing google apple amazon microsoft tesla"
  },
  /**
   * Articles: a capitalised word right after one is a thing ("the Mason jar", "la Rochelle"), not a person. Not
   * English "an", which is also German "to" ("geht an Heinrich Baumgartner").
   */
  articles: "the a la le les der die das el los las het een",
  /** First words of place names: "San Sebastián", "Saint-Étienne", "Den Haag", "São Paulo". */
  place_prefixes: "san santa santo saint sainte st sankt são sao den los las",
  /** Trades and colours that are also names: never a name when they stand alone ("painted Rose", "the Mason"). */
  alone_not_a_name: "baker carpenter mason smith cook butler taylor miller fisher rose olive violet ruby amber scarlett",
  /**
   * Labels of fields holding a person's name: table column headers, JSON and YAML keys, form labels, vCard `FN`.
   * A label is normalised (camelCase and snake_case split, lower case) and matches when one of these phrases is a
   * run of its words ("customer_name", "Nom du titulaire").
   */
  name_labels: {
    en: "name|full name|fullname|first name|firstname|last name|lastname|given name|givenname|surname|family name|customer|contact|patient|cardholder|card holder|employee|account holder|holder|recipient|sender|signatory|passenger|guest|tenant|applicant|beneficiary|payee|fn",
    fr: "nom|prénom|prenom|client|cliente|titulaire|destinataire|expéditeur|bénéficiaire|locataire|passager",
    de: "vorname|nachname|familienname|kunde|kundin|karteninhaber|mitarbeiter|kontoinhaber|empfänger|absender|mieter|patient|patientin",
    es: "nombre|apellidos|apellido|cliente|titular|paciente|destinatario|remitente|beneficiario|inquilino|pasajero",
    nl: "naam|voornaam|achternaam|klant|rekeninghouder|patiënt|patient|ontvanger|afzender|huurder|begunstigde"
  },
  /** The same for scripts written without spaces: a label containing one of these holds a name. */
  name_label_fragments: "姓名|联系人|聯絡人|名字|氏名|名前|担当者|имя|фио|отправитель",
  /** Parts of labels whose values are places, companies or contact data, never a person's name. */
  not_a_name_label_fragments:
    "city|ville|ort|stadt|wohnort|ciudad|localidad|plaats|woonplaats|stad|location|place|town|country|pays|land|pais|país|company|firma|société|empresa|bedrijf|street|rue|straße|strasse|calle|straat|address|adresse|dirección|adres|mail|status|state|estado|statut",
  /** Mail header fields whose display name is a person ("From: Jane Doe <jane@...>"). */
  mail_headers: "from|to|cc|reply-to|von|an|de|à|para|van|aan"
}

const list = (s: string) => s.split(s.includes("|") ? "|" : " ").filter((w) => w !== "")
const perLanguage = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, list(v)]))
const cues: Record<string, unknown> = {}
for (const [key, value] of Object.entries(CUES)) cues[key] = typeof value === "string" ? list(value) : perLanguage(value)

const faker = await fakerSection()
const dictionary = dictionarySection(faker)
const model = {
  description:
    "The portable name model (issue 40): gazetteers, ambiguity lists and per-language cue words that every engine's built-in name detector reads (docs/tokeniser.md \"Names\"). Generated by programs/build-name-model.ts; do not edit.",
  version: 1,
  lexicon: {
    faker,
    compromise: compromiseSection(faker, dictionary),
    dictionary,
    frequent: {
      source: "frequent names per language (programs/build-name-model.ts FREQUENT_NAMES)",
      given: sorted(Object.values(FREQUENT_NAMES.given).flatMap(list)),
      surnames: sorted(Object.values(FREQUENT_NAMES.surnames).flatMap(list))
    }
  },
  cues
}
const bytes = JSON.stringify(model, null, 0).replace(/^\{/, "{\n").replace(/,"(lexicon|cues|version)":/g, ',\n"$1":') + "\n"
if (check) {
  const onDisk = readFileSync(target, "utf8")
  if (onDisk !== bytes) {
    console.error("sdks/vectors/name-model.json differs from programs/build-name-model.ts's output (run it and review the diff)")
    process.exit(1)
  }
  console.log("sdks/vectors/name-model.json up to date")
} else {
  writeFileSync(target, bytes)
  const c = model.lexicon.compromise
  console.log(`wrote sdks/vectors/name-model.json: faker given ${faker.given.length}, surnames ${faker.surnames.length}; compromise given ${c.given.length}, surnames ${c.surnames.length}, ambiguous ${c.ambiguous.length}; ${bytes.length} bytes`)
}
