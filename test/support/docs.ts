import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { repoRoot } from "./cli.js";

/**
 * The documentation under docs/, which users read and copy from: tests hold its examples and tables
 * to what the gateway does.
 */

/** The text of docs/PAGE (e.g. "deployment.md"). */
export function readDoc(page: string): string {
  return readFileSync(join(repoRoot, "docs", page), "utf8");
}

/**
 * The part of docs/PAGE from the heading line `heading` (as written, e.g. "## Environment
 * variables") up to the next heading of the same or a higher level, or the end of the page.
 */
export function docSection(page: string, heading: string): string {
  const text = readDoc(page);
  const start = text.startsWith(`${heading}\n`) ? 0 : text.indexOf(`\n${heading}\n`);
  expect(start, `docs/${page} has a section "${heading}"`).toBeGreaterThan(-1);
  const level = /^#+/.exec(heading)![0].length;
  const next = new RegExp(`\\n#{1,${level}} `, "g");
  next.lastIndex = start + 1;
  const end = next.exec(text)?.index;
  return text.slice(start, end);
}

/** The fenced blocks of `language` (e.g. "sh") in docs/PAGE, in order, without their fences. */
export function docBlocks(page: string, language: string): string[] {
  return fencedBlocks(readDoc(page), language);
}

/** The fenced blocks of `language` in a Markdown text. */
export function fencedBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)\n\`\`\`$`, "gm"))].map((m) => m[1]!);
}
