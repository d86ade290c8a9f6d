/** vitest config: unit tests of the editor's pure modules (YAML <-> graph mapping, schema forms). */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["editor/src/**/*.test.ts", "editor/src/**/*.test.tsx"],
    environment: "node",
  },
});
