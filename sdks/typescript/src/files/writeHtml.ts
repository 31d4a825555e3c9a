/** A markdown answer as a standalone HTML document (UTF-8, escaped: the answer's text never becomes markup). */
import { type Block, inlineSpans, markdownBlocks } from "./markdownBlocks.ts"

const escapeHtml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

const inline = (text: string): string =>
  inlineSpans(text)
    .map((s) => {
      const t = escapeHtml(s.text).replace(/\n/g, "<br>")
      return s.code ? `<code>${t}</code>` : s.bold ? `<strong>${t}</strong>` : s.italic ? `<em>${t}</em>` : t
    })
    .join("")

const renderBlocks = (blocks: ReadonlyArray<Block>): string => {
  const out: Array<string> = []
  // Open lists, innermost last: [ordered, level].
  const lists: Array<{ ordered: boolean; level: number }> = []
  const closeListsTo = (level: number) => {
    while (lists.length > 0 && lists.at(-1)!.level >= level) out.push(lists.pop()!.ordered ? "</ol>" : "</ul>")
  }
  for (const block of blocks) {
    if (block.kind !== "listItem") closeListsTo(0)
    switch (block.kind) {
      case "heading":
        out.push(`<h${block.level}>${inline(block.text)}</h${block.level}>`)
        break
      case "paragraph":
        out.push(`<p>${inline(block.text)}</p>`)
        break
      case "code":
        out.push(`<pre><code>${escapeHtml(block.text)}</code></pre>`)
        break
      case "table": {
        const [head, ...body] = block.rows
        out.push(
          "<table>",
          `<thead><tr>${(head ?? []).map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead>`,
          `<tbody>${body.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</tbody>`,
          "</table>"
        )
        break
      }
      case "listItem": {
        closeListsTo(block.level + 1)
        const open = lists.at(-1)
        if (open !== undefined && open.level === block.level && open.ordered !== block.ordered) closeListsTo(block.level)
        if (lists.length === 0 || lists.at(-1)!.level < block.level) {
          lists.push({ ordered: block.ordered, level: block.level })
          out.push(block.ordered ? "<ol>" : "<ul>")
        }
        out.push(`<li>${inline(block.text)}</li>`)
        break
      }
    }
  }
  closeListsTo(0)
  return out.join("\n")
}

export const writeHtml = (markdown: string, title: string): Uint8Array =>
  new TextEncoder().encode(
    `<!doctype html>\n<html>\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n${renderBlocks(markdownBlocks(markdown))}\n</body>\n</html>\n`
  )
