import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

/**
 * The README links to every page of docs/, and the pages link to each other's sections: each
 * relative link names a file that exists and, with `#anchor`, a heading that file has (as GitHub
 * makes anchors from headings).
 */

const pages = [join(repoRoot, "README.md"), ...readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md")).map((name) => join(repoRoot, "docs", name))];

/** The page's text outside fenced code blocks. */
function prose(file: string): string {
  return readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

const anchorsOf = (file: string) => new Set([...prose(file).matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!)));

describe("documentation links", () => {
  it("every relative link of the README and docs/ reaches an existing file and heading", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, hash] = target!.split("#");
        const file = path ? resolve(dirname(page), path) : page;
        const where = `${relative(repoRoot, page)}: ${target}`;
        if (!existsSync(file)) broken.push(`${where} (no such file)`);
        else if (hash !== undefined && !anchorsOf(file).has(hash)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README links to every page of docs/", () => {
    const readme = prose(join(repoRoot, "README.md"));
    const linked = new Set([...readme.matchAll(/\]\(docs\/([^)#]+)/g)].map((m) => m[1]!));
    const all = readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md"));
    expect(all.filter((name) => !linked.has(name))).toEqual([]);
  });
});
