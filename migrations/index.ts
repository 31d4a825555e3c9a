import core from "./0001_core.ts"
import outbox from "./0002_outbox.ts"

/**
 * Every migration, by `<number>_<name>`, in order. Imported statically (not read from the file system) so the
 * same list runs under Node and Deno and from any working directory.
 */
export const migrations = {
  "0001_core": core,
  "0002_outbox": outbox
}
