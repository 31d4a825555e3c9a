import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 90_000,
    hookTimeout: 180_000,
    // Integration tests start real servers and databases; two cores, so keep the file parallelism modest.
    maxWorkers: 2,
    reporters: ["default"]
  }
})
