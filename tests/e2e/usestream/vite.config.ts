/** Builds the useStream test page (tests/e2e/test_cors.py) into the folder given with --outDir. */
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  plugins: [react()],
  logLevel: "warn",
  build: { chunkSizeWarningLimit: 4000 },
});
