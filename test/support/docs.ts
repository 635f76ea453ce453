import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Plain errors, no vitest and no gateway code: interop/test (its own vitest) takes blocks here too.
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

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
  if (start === -1) throw new Error(`docs/${page} has no section "${heading}"`);
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

/** A fenced code block of a page users read, as they copy it (de-indented when the fence is). */
export interface FencedBlock {
  /** The page, relative to the repository: "README.md", "docs/acp.md". */
  page: string;
  /** The line of its opening fence (1-based). */
  line: number;
  /** The fence's info string ("sh", "json"), "" when it has none. */
  language: string;
  text: string;
}

/** The pages users read and copy from: README.md and docs/*.md, relative to the repository. */
export function documentedPages(): string[] {
  const docs = readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

/** Every fenced block of PAGE (relative to the repository), in order, indented ones (in a list) included. */
export function pageBlocks(page: string): FencedBlock[] {
  const lines = readFileSync(join(repoRoot, page), "utf8").split("\n");
  const blocks: FencedBlock[] = [];
  let open: { line: number; language: string; indent: string; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^(\s*)```(\S*)\s*$/.exec(text);
    if (fence && !open) open = { line: index + 1, language: fence[2]!, indent: fence[1]!, body: [] };
    else if (fence && open) {
      const { indent } = open;
      blocks.push({ page, line: open.line, language: open.language, text: open.body.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join("\n") });
      open = undefined;
    } else open?.body.push(text);
  });
  if (open) throw new Error(`${page}: the fence opened on line ${open.line} is not closed`);
  return blocks;
}

/**
 * The text of the one fenced block of PAGE that starts with START. Tests take the blocks they run
 * through this, with literal arguments: test/e2e/docs/docs-blocks.test.ts finds the calls in the test
 * files and fails on any block of the docs that no test takes and its skip list does not name.
 */
export function docBlock(page: string, start: string): string {
  const found = pageBlocks(page).filter((block) => block.text.startsWith(start));
  if (found.length !== 1) throw new Error(`${page}: ${found.length} blocks (not one) start with ${JSON.stringify(start)}`);
  return found[0]!.text;
}

/** The lines of a shell block as commands: `\` continuations joined, comments (outside quotes) and blank lines dropped. */
export function shellCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((line) => withoutComment(line).trim())
    .filter((line) => line !== "");
}

/** LINE up to a `#` that starts a shell comment: at the start or after a blank, outside quotes. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}
