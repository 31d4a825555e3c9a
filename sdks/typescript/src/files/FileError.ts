/**
 * A file the device refuses to read or write. Nothing is sent when a file in a request is refused. Codes (stable):
 * `file_too_large` (over the size limit), `file_unsupported_type` (a type no reader handles), `file_malformed` (not
 * what its name says, or broken), `file_encrypted` (password-protected), `file_zip_bomb` (its archive would expand
 * past the limits), `file_reference_unsupported` (a file id or URL instead of the file's bytes: the device cannot
 * read it, and the provider would read it untokenised), `file_anchor_unknown` (a round-trip edit names a paragraph
 * or cell the original does not have).
 */
import { RelayError } from "../errors.ts"

export type FileErrorCode =
  | "file_too_large"
  | "file_unsupported_type"
  | "file_malformed"
  | "file_encrypted"
  | "file_zip_bomb"
  | "file_reference_unsupported"
  | "file_anchor_unknown"

/** The HTTP status a local proxy or `client.fetch` answers for each code. */
export const FILE_ERROR_STATUS: Readonly<Record<FileErrorCode, number>> = {
  file_too_large: 413,
  file_zip_bomb: 413,
  file_unsupported_type: 415,
  file_malformed: 422,
  file_encrypted: 422,
  file_reference_unsupported: 400,
  file_anchor_unknown: 422
}

export class FileError extends RelayError {
  declare readonly code: FileErrorCode
  /** The HTTP status this refusal maps to (the error itself happened on the device: `status` is 0). */
  readonly httpStatus: number
  constructor(code: FileErrorCode, message: string, cause?: unknown) {
    super({ status: 0, code, message, cause })
    this.httpStatus = FILE_ERROR_STATUS[code]
  }
}

export const isFileError = (error: unknown): error is FileError => error instanceof FileError
