import { defineConfig } from "vitest/config"

export default defineConfig({
  // The starter kit's server imports the SDK's wire entry by its package name, as a fork of it does; in this repository
  // that is the SDK's source (node runs it with --conditions=privacy-relay-repo, tsconfig.json maps it the same way).
  resolve: { alias: [{ find: /^@privacy-relay\/sdk\/wire$/, replacement: new URL("./sdks/typescript/src/wire/index.ts", import.meta.url).pathname }] },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 90_000,
    hookTimeout: 180_000,
    // Integration tests start real servers and databases; two cores, so keep the file parallelism modest.
    maxWorkers: 2,
    reporters: ["default"]
  }
})
