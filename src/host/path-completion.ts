import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";

/**
 * `session.autocompletePaths`: entries of the directory named by the query (relative to the
 * session cwd, or absolute) whose names start with the query's last segment; directories end with
 * `/`. Hidden entries appear only when the segment itself starts with a dot. Sorted, at most
 * `limit`, and an unreadable directory simply has no suggestions.
 */
export async function completePaths(cwd: string, query: string, limit: number): Promise<string[]> {
  const slash = query.lastIndexOf("/");
  const directoryPart = query.slice(0, slash + 1);
  const prefix = query.slice(slash + 1);
  const directory = directoryPart === "" ? cwd : isAbsolute(directoryPart) ? directoryPart : join(cwd, directoryPart);
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  const matches = entries
    .filter((e) => e.name.startsWith(prefix) && (prefix.startsWith(".") || !e.name.startsWith(".")))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, limit);
  const paths: string[] = [];
  for (const entry of matches) {
    const isDirectory = entry.isDirectory() || (entry.isSymbolicLink() && (await stat(join(directory, entry.name)).then((s) => s.isDirectory(), () => false)));
    paths.push(`${directoryPart}${entry.name}${isDirectory ? "/" : ""}`);
  }
  return paths;
}
