/** What `readFile` gives back: the file's text as markdown, and the structure it found. */
export type FileFormat = "docx" | "xlsx" | "pptx" | "pdf" | "html" | "md" | "csv" | "txt"

export interface FileHeading {
  readonly level: number
  readonly text: string
}

export interface FileSheet {
  readonly name: string
  readonly rows: number
  readonly columns: number
}

export interface FileStructure {
  readonly headings: ReadonlyArray<FileHeading>
  /** Tables rendered as markdown tables (sheets included). */
  readonly tables: number
  readonly listItems: number
  /** Parts of the file that were read besides its body: headers, footers, comments, footnotes, notes. */
  readonly parts: ReadonlyArray<string>
  readonly sheets?: ReadonlyArray<FileSheet>
  readonly slides?: number
  readonly pages?: number
}

export interface ReadFileResult {
  readonly filename: string
  readonly format: FileFormat
  readonly mediaType: string
  /** The file's text as markdown (headings, lists, tables as markdown tables, sheets, slides in order). */
  readonly text: string
  /** Holds the file's original text (headings): it stays on the device. */
  readonly structure: FileStructure
}

/** The output of one reader, before readFile adds the file's name and type. */
export interface ReaderOutput {
  readonly text: string
  readonly structure: FileStructure
}

export interface ReaderOptions {
  /**
   * Prefix each paragraph (.docx, .pptx) with its anchor `⟦part/n⟧` (cells of .xlsx are named by their address),
   * so a model can answer with edits that `reconstruct` writes back into the original file.
   */
  readonly anchors: boolean
}
