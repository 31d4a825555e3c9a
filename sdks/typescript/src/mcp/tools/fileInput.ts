/**
 * How the file tools take a file: `{ path }` of a file on this device, or `{ filename, content_base64 }`; refused
 * beyond MCP_MAX_FILE_BYTES before it is read into memory (by its size on disk, or by the length of its base64).
 */
import { readFileSync, statSync } from "node:fs"
import { basename, resolve } from "node:path"
import { z } from "zod"
import { expandHomePath } from "../../client/homePath.ts"
import type { SessionContext } from "../context.ts"
import { ToolError } from "../toolResult.ts"

// One object (an MCP input schema is an object at its root); readInput checks that exactly one form is given.
export const fileInput = z.strictObject({
  path: z.string().min(1).optional().describe("A file on this device (absolute, or relative to the server's working directory)."),
  filename: z.string().min(1).max(255).optional().describe("With content_base64: the file's name; its extension decides how it is read."),
  content_base64: z.string().optional().describe("With filename: the file's bytes, base64.")
})

export type FileInput = z.infer<typeof fileInput>

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * A path a tool was given, as on the command line: absolute, relative to the server's working directory, or under
 * `~/` (the home directory: a model asked to read "~/report.docx" passes it as written). `~user` is an argument error.
 */
export const toolPath = (path: string): string => {
  try {
    return resolve(expandHomePath(path, "path"))
  } catch (error) {
    throw new ToolError("invalid_arguments", (error as Error).message)
  }
}

/** The bytes and name of a file given by path or inline, refused beyond MCP_MAX_FILE_BYTES. */
export const readInput = (input: FileInput, session: SessionContext): { filename: string; bytes: Buffer } => {
  const max = session.shared.settings.maxFileBytes
  if (input.path !== undefined) {
    if (input.filename !== undefined || input.content_base64 !== undefined) {
      throw new ToolError("invalid_arguments", "Give either path, or filename with content_base64; not both.")
    }
    const path = toolPath(input.path)
    let size: number
    try {
      const stats = statSync(path)
      if (!stats.isFile()) throw new ToolError("file_not_found", `${path} is not a regular file.`)
      size = stats.size
    } catch (error) {
      if (error instanceof ToolError) throw error
      throw new ToolError("file_not_found", `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}).`)
    }
    if (size > max) throw new ToolError("file_too_large", `${basename(path)} is ${size} bytes; the limit is ${max} (MCP_MAX_FILE_BYTES).`)
    return { filename: basename(path), bytes: readFileSync(path) }
  }
  if (input.filename === undefined || input.content_base64 === undefined) {
    throw new ToolError("invalid_arguments", "Give path, or filename with content_base64.")
  }
  const compact = input.content_base64.replace(/\s+/g, "")
  if (!BASE64.test(compact)) throw new ToolError("invalid_arguments", "content_base64 is not base64.")
  if (Math.floor((compact.length * 3) / 4) > max + 2) throw new ToolError("file_too_large", `${input.filename} is over the limit of ${max} bytes (MCP_MAX_FILE_BYTES).`)
  const bytes = Buffer.from(compact, "base64")
  if (bytes.length > max) throw new ToolError("file_too_large", `${input.filename} is ${bytes.length} bytes; the limit is ${max} (MCP_MAX_FILE_BYTES).`)
  return { filename: input.filename, bytes }
}

