/**
 * Edits a model answers for a round trip: `⟦document/12⟧ new text` for a paragraph of a .docx or .pptx (anchors as
 * readFile writes them with `anchors: true`), `⟦Sheet1!B2⟧ new value` for a cell. An edit's text runs to the next
 * anchor or the end of its line; in a markdown table row, to the end of its cell.
 */
const ANCHOR = /⟦([^⟦⟧\n]{1,200})⟧/g

export const parseAnchorEdits = (answer: string): Map<string, string> => {
  const edits = new Map<string, string>()
  for (const line of answer.replace(/\r\n?/g, "\n").split("\n")) {
    const found = [...line.matchAll(ANCHOR)]
    const inTable = line.trimStart().startsWith("|")
    found.forEach((m, i) => {
      const start = m.index + m[0].length
      const end = i + 1 < found.length ? found[i + 1]!.index : line.length
      let text = line.slice(start, end)
      if (inTable) {
        const cellEnd = text.search(/(?<!\\)\|/)
        if (cellEnd >= 0) text = text.slice(0, cellEnd)
        text = text.replaceAll("\\|", "|").replace(/<br\s*\/?>\s*$/i, "").replace(/<br\s*\/?>/gi, "\n")
      }
      edits.set(m[1]!.trim(), text.trim())
    })
  }
  return edits
}

export const escapeXmlText = (text: string): string => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
