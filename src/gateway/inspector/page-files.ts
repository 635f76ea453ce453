import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The inspector's page: plain static files in the package's inspector/ folder (HTML, CSS and ES
 * modules the browser loads as they are, no build step), read once when the gateway starts. Found
 * by walking up from this module to the package root, wherever it runs (src/ under tsx, the bundle
 * in dist/, the container's /app).
 */

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** The files the page is made of, served by name (nothing else in the folder is reachable). */
export const PAGE_FILES = ["index.html", "style.css", "app.js", "feed.js", "filter.js", "rows.js", "render.js", "timeline.js", "session-panel.js", "receipts.js", "transcript.js", "transcript-drop.js", "viewer.js"] as const;

export interface PageFile {
  body: string;
  contentType: string;
}

export function pageDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "inspector");
    if (existsSync(join(candidate, "index.html")) && existsSync(join(candidate, "app.js"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("tau-gateway: the inspector's page (inspector/index.html) not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function readPageFiles(dir = pageDir()): Map<string, PageFile> {
  const files = new Map<string, PageFile>();
  for (const name of PAGE_FILES) {
    files.set(name, { body: readFileSync(join(dir, name), "utf8"), contentType: CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)]! });
  }
  return files;
}
