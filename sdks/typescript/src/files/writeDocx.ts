/**
 * A markdown answer as a new .docx (the `docx` package, loaded when first used): headings as Word heading styles,
 * bullet and numbered lists, tables, bold/italic/code runs, code blocks in a monospaced font.
 */
import { inlineSpans, markdownBlocks } from "./markdownBlocks.ts"

export const writeDocx = async (markdown: string, title: string): Promise<Uint8Array> => {
  const docx = await import("docx")
  const { AlignmentType, Document, HeadingLevel, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow, TextRun, WidthType } = docx
  const HEADINGS = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4, HeadingLevel.HEADING_5, HeadingLevel.HEADING_6]
  const runs = (text: string) =>
    inlineSpans(text).flatMap((s) =>
      s.text.split("\n").map((piece, i) => new TextRun({ text: piece, bold: s.bold, italics: s.italic, ...(s.code ? { font: "Courier New" } : {}), ...(i > 0 ? { break: 1 } : {}) }))
    )
  // Each numbered list restarts at 1: a new numbering instance per list.
  let numberedList = 0
  let previousOrdered = false
  const children: Array<InstanceType<typeof Paragraph> | InstanceType<typeof Table>> = []
  for (const block of markdownBlocks(markdown)) {
    const ordered = block.kind === "listItem" && block.ordered
    if (ordered && !previousOrdered) numberedList++
    previousOrdered = ordered
    switch (block.kind) {
      case "heading":
        children.push(new Paragraph({ heading: HEADINGS[block.level - 1], children: runs(block.text) }))
        break
      case "paragraph":
        children.push(new Paragraph({ children: runs(block.text) }))
        break
      case "code":
        children.push(new Paragraph({ children: block.text.split("\n").map((line, i) => new TextRun({ text: line, font: "Courier New", ...(i > 0 ? { break: 1 } : {}) })) }))
        break
      case "listItem":
        children.push(
          block.ordered
            ? new Paragraph({ numbering: { reference: "numbered", level: Math.min(block.level, 8), instance: numberedList }, children: runs(block.text) })
            : new Paragraph({ bullet: { level: Math.min(block.level, 8) }, children: runs(block.text) })
        )
        break
      case "table": {
        const width = Math.max(...block.rows.map((r) => r.length))
        children.push(
          new Table({
            width: { size: 100, type: WidthType.PERCENTAGE },
            rows: block.rows.map((row, r) =>
              new TableRow({
                ...(r === 0 ? { tableHeader: true } : {}),
                children: Array.from({ length: width }, (_, c) => new TableCell({ children: [new Paragraph({ children: r === 0 ? [new TextRun({ text: row[c] ?? "", bold: true })] : runs(row[c] ?? "") })] }))
              })
            )
          })
        )
        break
      }
    }
  }
  const document = new Document({
    title,
    numbering: {
      config: [
        {
          reference: "numbered",
          levels: Array.from({ length: 9 }, (_, level) => ({ level, format: LevelFormat.DECIMAL, text: `%${level + 1}.`, alignment: AlignmentType.START, style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } } }))
        }
      ]
    },
    sections: [{ children }]
  })
  return new Uint8Array(await Packer.toArrayBuffer(document))
}
