/**
 * The tags of an XML text with their exact offsets, for editing a part in place: everything between the edits
 * (styles, properties, other elements) is kept byte for byte. Attribute values may hold `>`; comments, processing
 * instructions and CDATA are skipped as wholes.
 */
export interface XmlTag {
  readonly name: string
  readonly start: number
  readonly end: number
  readonly closing: boolean
  readonly selfClosing: boolean
}

const TAG = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>|<!DOCTYPE[^>]*>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g

export function* xmlTags(xml: string): Generator<XmlTag> {
  for (const m of xml.matchAll(TAG)) {
    if (m[2] === undefined) continue
    yield { name: m[2], start: m.index, end: m.index + m[0].length, closing: m[1] === "/", selfClosing: m[4] === "/" }
  }
}

/**
 * Applies replacements (non-overlapping ranges) to a text. An insertion (an empty range) at the offset where a
 * replaced range starts goes before it; insertions at one offset keep their order.
 */
export const splice = (text: string, edits: ReadonlyArray<{ readonly start: number; readonly end: number; readonly value: string }>): string => {
  const sorted = [...edits].sort((a, b) => a.start - b.start || (a.end - a.start) - (b.end - b.start))
  let out = ""
  let at = 0
  for (const e of sorted) {
    out += text.slice(at, e.start) + e.value
    at = e.end
  }
  return out + text.slice(at)
}
