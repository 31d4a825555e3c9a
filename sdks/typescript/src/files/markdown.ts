/** Markdown pieces shared by the readers: tables, and text made safe for one table cell. */

/** One cell: pipes escaped, line breaks as <br> (a markdown table row is one line). */
export const cellText = (text: string): string => text.replaceAll("|", "\\|").replace(/\r?\n/g, "<br>").trim()

/** A markdown table; the first row is the header. Rows are padded to the widest. */
export const markdownTable = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  if (rows.length === 0) return ""
  const width = Math.max(1, ...rows.map((r) => r.length))
  const line = (cells: ReadonlyArray<string>) => `| ${Array.from({ length: width }, (_, i) => cellText(cells[i] ?? "")).join(" | ")} |`
  return [line(rows[0]!), `|${" --- |".repeat(width)}`, ...rows.slice(1).map(line)].join("\n")
}
