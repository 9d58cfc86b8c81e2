import { defineConfig } from "vite";

// Built into dist/ and served by the api under /ui/ (no CDN: every asset is in the build).
export default defineConfig({
  root: "src",
  base: "/ui/",
  build: { outDir: "../dist", emptyOutDir: true, sourcemap: false, target: "es2022" },
  oxc: { jsx: { runtime: "automatic" } },
});
