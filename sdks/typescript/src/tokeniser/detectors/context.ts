/**
 * Context helpers shared by detectors: the words right before a candidate decide whether a number is
 * an identifier or, say, an order number.
 */

/** The text of the same line before `index`, at most `width` characters. */
export const textBefore = (text: string, index: number, width: number): string => {
  const from = Math.max(0, index - width)
  const slice = text.slice(from, index)
  const newline = slice.lastIndexOf("\n")
  return newline === -1 ? slice : slice.slice(newline + 1)
}

/**
 * Labels that announce a reference number which is not personal data. A digit run directly after one
 * of them (only separators in between) is not a card, phone or national id, whatever its checksum says:
 * one random number in ten passes Luhn, so an order number that passes by chance must not become a card.
 * A bare "#" is not such a label: "# 378282246310005" may well be a card, and leaving it in clear fails open.
 */
const NON_PERSONAL_NUMBER_LABEL =
  /(?:\b(?:order|orders|invoice|invoices|inv|tracking|track|ref|reference|ticket|case|isbn(?:-1[03])?|issn|ean|upc|sku|serial|s\/n|part|item|article|confirmation|booking|reservation|shipment|parcel|package|po|receipt|build|commande|facture|rechnung|bestellung|bestellnummer|auftrag|pedido|factura|referencia|n[ºo°]\s*de\s*pedido)\b\.?\s*(?:no\.?|nr\.?|number|num\.?|n[ºo°]|#|id|code|numéro|nummer|número)?\s*[:#=]?\s*)$/i

export const followsNonPersonalLabel = (text: string, index: number): boolean =>
  NON_PERSONAL_NUMBER_LABEL.test(textBefore(text, index, 40))

/** True when the characters just outside [start, end) are not letters or digits (a whole-token match). */
export const isDelimited = (text: string, start: number, end: number): boolean => {
  const before = start === 0 ? "" : text[start - 1]!
  const after = end >= text.length ? "" : text[end]!
  return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)
}

export const digitsOnly = (value: string): string => value.replace(/\D/g, "")
