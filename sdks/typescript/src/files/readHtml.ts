/**
 * .html: the visible text as markdown (htmlparser2, a forgiving parser: broken markup is read as browsers would):
 * headings, paragraphs, list items, tables as markdown tables, links' text. Scripts, styles and templates are
 * left out; so are attributes, except an image's alt text.
 */
import { Parser } from "htmlparser2"
import { markdownTable } from "./markdown.ts"
import type { FileHeading, ReaderOutput } from "./types.ts"

const BLOCK = new Set(["p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote", "pre", "figure", "figcaption", "address", "dd", "dt", "form", "fieldset", "details", "summary", "caption", "title", "hr"])
const HIDDEN = new Set(["script", "style", "template", "noscript", "head"])

export const readHtml = (html: string): ReaderOutput => {
  const blocks: Array<string> = []
  const headings: Array<FileHeading> = []
  let line = ""
  let hidden = 0
  let heading: number | undefined
  const lists: Array<{ ordered: boolean; n: number }> = []
  let listItems = 0
  let tableCount = 0
  const tables: Array<{ rows: Array<Array<string>>; row: Array<string> | undefined; cell: string | undefined }> = []
  let title = false

  const flush = () => {
    const text = line.replace(/[ \t\r\n]+/g, " ").trim()
    line = ""
    if (text === "") return
    const table = tables.at(-1)
    if (table?.cell !== undefined) {
      table.cell += (table.cell === "" ? "" : "\n") + text
      return
    }
    if (heading !== undefined) {
      headings.push({ level: heading, text })
      blocks.push(`${"#".repeat(heading)} ${text}`)
    } else if (lists.length > 0) {
      const list = lists.at(-1)!
      blocks.push(`${"  ".repeat(lists.length - 1)}${list.ordered ? `${list.n}.` : "-"} ${text}`)
    } else blocks.push(text)
  }

  const parser = new Parser(
    {
      onopentag: (name, attributes) => {
        if (HIDDEN.has(name) && name !== "head") hidden++
        if (hidden > 0) return
        if (name === "title") title = true
        const level = /^h([1-6])$/.exec(name)
        if (level !== null) {
          flush()
          heading = Number(level[1])
        } else if (name === "ul" || name === "ol") {
          flush()
          lists.push({ ordered: name === "ol", n: 0 })
        } else if (name === "li") {
          flush()
          const list = lists.at(-1)
          if (list !== undefined) list.n++
          listItems++
        } else if (name === "table") {
          flush()
          tables.push({ rows: [], row: undefined, cell: undefined })
        } else if (name === "tr") {
          flush()
          const t = tables.at(-1)
          if (t !== undefined) t.row = []
        } else if (name === "td" || name === "th") {
          flush()
          const t = tables.at(-1)
          if (t !== undefined) t.cell = ""
        } else if (name === "br") line += "\n"
        else if (name === "img" && attributes.alt) line += ` ${attributes.alt} `
        else if (BLOCK.has(name)) flush()
      },
      ontext: (text) => {
        if (hidden === 0) line += text
      },
      onclosetag: (name) => {
        if (HIDDEN.has(name) && name !== "head") {
          hidden = Math.max(0, hidden - 1)
          return
        }
        if (hidden > 0) return
        if (name === "title") {
          const text = line.replace(/\s+/g, " ").trim()
          line = ""
          if (text !== "" && title) blocks.push(`Title: ${text}`)
          title = false
        } else if (/^h[1-6]$/.test(name)) {
          flush()
          heading = undefined
        } else if (name === "ul" || name === "ol") {
          flush()
          lists.pop()
        } else if (name === "li") flush()
        else if (name === "td" || name === "th") {
          flush()
          const t = tables.at(-1)
          if (t?.cell !== undefined) t.row?.push(t.cell)
          if (t !== undefined) t.cell = undefined
        } else if (name === "tr") {
          const t = tables.at(-1)
          if (t?.row !== undefined) t.rows.push(t.row)
          if (t !== undefined) t.row = undefined
        } else if (name === "table") {
          flush()
          const t = tables.pop()
          if (t !== undefined && t.rows.length > 0) {
            tableCount++
            const rendered = markdownTable(t.rows)
            const outer = tables.at(-1)
            if (outer?.cell !== undefined) outer.cell += (outer.cell === "" ? "" : "\n") + rendered
            else blocks.push(rendered)
          }
        } else if (BLOCK.has(name)) flush()
      }
    },
    { decodeEntities: true }
  )
  parser.write(html)
  parser.end()
  flush()
  return { text: blocks.join("\n\n"), structure: { headings, tables: tableCount, listItems, parts: [] } }
}
