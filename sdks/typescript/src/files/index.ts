/** Files on the device: attachments read into tokenisable text, answers rebuilt into files. */
export { FileError, FILE_ERROR_STATUS, isFileError, type FileErrorCode } from "./FileError.ts"
export { DEFAULT_FILE_LIMITS, type FileLimits } from "./limits.ts"
export { formatOf, MEDIA_TYPES, readFile, type ReadFileOptions } from "./readFile.ts"
export type { FileFormat, FileHeading, FileSheet, FileStructure, ReadFileResult } from "./types.ts"
export { fileTextPart, inlineFiles, type InlinedFile, type InlinedRequest, type InlineFilesOptions } from "./inlineFiles.ts"
export { reconstruct, type ReconstructFormat, type ReconstructOptions } from "./reconstruct.ts"
