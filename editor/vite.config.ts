/**
 * Vite config for the Plait editor. Root is editor/, output editor/dist/ (served
 * by `plait serve` at `/`). In dev, API paths are proxied to the local server so
 * the page only ever talks to its own origin.
 */
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

const API_PATHS = ["/graphs", "/assistants", "/threads", "/runs", "/approvals", "/store", "/info", "/ok", "/schemas"];
const target = process.env.PLAIT_API ?? "http://127.0.0.1:8000";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
  },
  worker: { format: "es" },
  server: {
    fs: { allow: [fileURLToPath(new URL("..", import.meta.url))] },
    proxy: Object.fromEntries(API_PATHS.map((p) => [p, { target, changeOrigin: false }])),
  },
});
