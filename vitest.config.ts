import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests read the official vectors from ../shared/vectors; a missing folder must fail, not skip.
    testTimeout: 30_000
  }
})
