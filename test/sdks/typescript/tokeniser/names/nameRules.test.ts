import { describe, expect, it } from "vitest"
import { builtinNameModel } from "../../../../../sdks/typescript/src/tokeniser/index.ts"
import { combineNames, detectNamesByRules } from "../../../../../sdks/typescript/src/tokeniser/names/nameRules.ts"

const names = async (text: string): Promise<Array<string>> => (await builtinNameModel.detect(text)).map((s) => text.slice(s.start, s.end))

describe("built-in names: the portable name model (gazetteers, cue words, labelled fields and negative lists)", () => {
  it("table cells and labelled fields: Name:, JSON name, vCard FN, mail headers, cardholder and patient fields", async () => {
    expect(await names("name,phone\nAoife Brennan,+353 87 214 9960\nNiamh Keane,+353 86 550 1723")).toEqual(["Aoife Brennan", "Niamh Keane"])
    expect(await names('{"name": "Bridget Kowalski", "city": "Lyon"}')).toEqual(["Bridget Kowalski"])
    expect(await names("FN:Maximilian Ostendorf\nTEL;TYPE=cell:+49 171 2345678")).toEqual(["Maximilian Ostendorf"])
    expect(await names('From: "Beatriz Casares" <bcasares@example.es>\nSubject: factura')).toEqual(["Beatriz Casares"])
    expect(await names("Cardholder: Winifred Oyelaran\nPatient: Tomasz Wiśniewski")).toEqual(["Winifred Oyelaran", "Tomasz Wiśniewski"])
    expect(await names("| Voornaam | Achternaam |\n|---|---|\n| Sjoerd | van der Linden |")).toEqual(["Sjoerd", "van der Linden"])
  })

  it("single given names in greetings, sign-offs and as chat speakers", async () => {
    expect(await names("Hi Marloes,\n\nthe files are attached.\n\nGroet,\nSjoerd")).toEqual(["Marloes", "Sjoerd"])
    expect(await names("Thanks Aurélie, see you tomorrow!")).toEqual(["Aurélie"])
    expect(await names("[09:14] Femmetje: ok\n[09:15] Wietske: top")).toEqual(["Femmetje", "Wietske"])
  })

  it("full names in French, German, Spanish and Dutch sentences", async () => {
    expect(await names("Bonjour, je suis Clothilde Aubert, née le 3 mai 1957.")).toEqual(["Clothilde Aubert"])
    expect(await names("Die Erstattung geht an Heinrich Baumgartner.")).toEqual(["Heinrich Baumgartner"])
    expect(await names("Transferencia a nombre de Itziar Goikoetxea.")).toEqual(["Itziar Goikoetxea"])
    expect(await names("Groeten van Wietske Hoekstra en Anne-Fleur de Jong.")).toEqual(["Wietske Hoekstra", "Anne-Fleur de Jong"])
  })

  it("surnames after titles in each language; the title stays readable", async () => {
    expect(await names("Herr Oberhuber und Frau Kowalczyk")).toEqual(["Oberhuber", "Kowalczyk"])
    expect(await names("Monsieur Vautrin a appelé Madame Lefranc.")).toEqual(["Vautrin", "Lefranc"])
    expect(await names("Sr. Olabarrieta y Sra. de la Fuente llegan el lunes.")).toEqual(["Olabarrieta", "de la Fuente"])
    expect(await names("Mevr. Hoogendoorn belde; meneer Brinkman niet.")).toEqual(["Hoogendoorn", "Brinkman"])
    expect(await names("Ms. Abernathy asked for a call back.")).toEqual(["Abernathy"])
  })

  it("Cyrillic and labelled CJK names, signature blocks", async () => {
    expect(await names("Анна Смирнова прислала документы.")).toEqual(["Анна Смирнова"])
    expect(await names("--\nCarmen Villanueva\nDirectora Comercial\n+34 612 34 56 78")).toEqual(["Carmen Villanueva"])
    // CJK names have no capitals to go by: only a name label announces them.
    expect(await names("联系人：王伟，电话 +86 139 1234 5678")).toEqual(["王伟"])
    expect(await names("ФИО: Дмитрий Иванов")).toEqual(["Дмитрий Иванов"])
  })

  it("whole names: a caught given name pulls in its surname, particles and hyphenated parts", async () => {
    expect(await names("Jean-Baptiste Lemaire-Dufour signed with Ludwig van der Heyden.")).toEqual(["Jean-Baptiste Lemaire-Dufour", "Ludwig van der Heyden"])
    const text = "Please call Giulia Rossi today."
    const giulia = text.indexOf("Giulia")
    expect(combineNames(text, [{ start: giulia, end: giulia + 6, type: "PERSON" }]).map((s) => text.slice(s.start, s.end))).toEqual(["Giulia Rossi"])
  })

  it("not names: places, months, colours and trades, companies named after people, salutations", async () => {
    expect(await names("We flew from Florence to Charlotte via Jackson in May.")).toEqual([])
    expect(await names("Meeting in Den Haag and San Sebastián; then Saint-Étienne.")).toEqual([])
    expect(await names("The walls were painted Rose and Olive; April and June were the busiest months.")).toEqual([])
    expect(await names("Ask the Baker or the Carpenter on site; the Mason left early.")).toEqual([])
    expect(await names("Ford, Dell and Johnson & Johnson reported earnings; Porsche did not.")).toEqual([])
    expect(await names("Dear Sir or Madam, thank you for your letter.")).toEqual([])
    expect(await names("Dear Anna, thanks.")).toEqual(["Anna"])
  })

  it("column headers and JSON keys written as one word or in camelCase name a name field", async () => {
    expect(await names('{"firstname": "Mei", "lastName": "Okonkwo", "status": "Active"}')).toEqual(["Mei", "Okonkwo"])
    expect(await names("- customer_id: 6654762\n  first_name: Gareth\n  city: Leeds")).toEqual(["Gareth"])
    expect(await names("nom_titulaire;ville\nAmélie Garnier;Lyon")).toEqual(["Amélie Garnier"])
  })

  it("lone given names mid-sentence, in quoted values and after possessive words; not beside an ampersand", async () => {
    expect(await names("Numéro de sécurité sociale de Camille : 191038124954878.")).toEqual(["Camille"])
    expect(await names("I spoke with Ingrid yesterday.")).toEqual(["Ingrid"])
    expect(await names('INSERT INTO customers VALUES ("Thomas", 42)')).toEqual(["Thomas"])
    expect(await names("Brands: Johnson & Johnson, Procter & Gamble.")).toEqual([])
  })

  it("signatures: name lines after a sign-off or a -- delimiter, even with names in no list", async () => {
    expect(await names("Mit freundlichen Grüßen\nAnneliese Brandenstein\nVertrieb")).toEqual(["Anneliese Brandenstein"])
    expect(await names("Cheers,\nGrace Callaghan\nHead of Finance")).toEqual(["Grace Callaghan"])
    expect(await names("--\nGrace Ashworth\nVertriebsleiter")).toEqual(["Grace Ashworth"])
    expect(await names("Met vriendelijke groet,\nFloor de Wit")).toEqual(["Floor de Wit"])
  })

  it("place words and particles inside a name: a given name pulls a surname that is also a place", async () => {
    expect(await names("The tenant, James Wilson, paid late again.")).toEqual(["James Wilson"])
    expect(await names("Sophie Martin habite à Bordeaux.")).toEqual(["Sophie Martin"])
    expect(await names("Cordialement,\nInès Le Goff")).toEqual(["Inès Le Goff"])
    expect(await names("[09:49] Lukas: Anneliese von Brandenstein, Reisepass-Nr. folgt")).toEqual(["Lukas", "Anneliese von Brandenstein"])
  })

  it("not names: given names that are ordinary words before ordinary words, brands, places, stations (hard negatives)", async () => {
    for (const text of [
      "The Grace Period ends on Friday.",
      "An Amber Alert was issued.",
      "Crystal Palace won again.",
      "She painted it Olive Green.",
      "The Summer Sale starts Monday.",
      "We parked near Victoria Station.",
      "Upgrade to Ruby 3.3 and Python 3.12.",
      "Sydney Opera House tickets are sold out.",
      "Austin and Dallas offices will close.",
      "Hope Street is closed for works.",
      "Paris Saint-Germain won the match.",
      "The Chase Bank branch closed.",
      "Mark the date in your calendar.",
      "Will you send the file?",
      "Die Firma Engel & Völkers verkauft Häuser.",
      "Das Hotel Adler liegt an der Rosa-Luxemburg-Straße.",
      "Nous avons reçu la Commande pour la Maison Blanche.",
      "La Rochelle est une belle ville."
    ]) expect(await names(text), text).toEqual([])
  })

  it("ordinary-word given names still start a name before a known surname", async () => {
    expect(await names("Grace Murphy and Elizabeth Warren debated.")).toEqual(["Grace Murphy", "Elizabeth Warren"])
    expect(await names("Paris Hilton is in this sentence.")).toEqual(["Paris Hilton"])
  })

  it("a mail header with an address and no display name holds no name (not even an empty one)", () => {
    expect(detectNamesByRules("Reply-To: <noreply.billing@shop.example>")).toEqual([])
  })

  it("rules alone run in linear time over a long text", () => {
    const unit = "Hi Anna, Herr Müller called Maria García about the invoice from Paris. "
    const small = unit.repeat(500)
    const big = unit.repeat(5000)
    expect(detectNamesByRules(small).length * 10).toBe(detectNamesByRules(big).length)
  })
})
