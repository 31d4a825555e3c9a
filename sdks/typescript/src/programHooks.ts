/** What an entry point may add to the package's programs (`privacy-relay proxy`, `privacy-relay mcp`). */
export interface ProgramHooks {
  /** Called once the program is serving (the repository's entry points stop with the npm script that started them). */
  readonly afterStart?: () => void
}
