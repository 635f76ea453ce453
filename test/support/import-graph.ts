import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";

/**
 * The file import graph of src/, read the way the compiler reads it: every import, `export … from`
 * and `import()` (type-only ones included, since a type-only cycle still ties modules together),
 * resolved with the project's own module resolution.
 */

export interface ImportEdge {
  /** Importing file, relative to the repository root with `/` separators. */
  from: string;
  /** Imported file, relative to the repository root; undefined when nothing resolved. */
  to: string | undefined;
  specifier: string;
  /** A package or a Node built-in rather than a file of this repository. */
  external: boolean;
}

export function readImportGraph(root: string, folder = "src"): { files: string[]; edges: ImportEdge[] } {
  const options = compilerOptions(root);
  const files = readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(root, folder, name))
    .sort();
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName: specifier } of importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys).resolvedModule;
      const external = resolved ? resolved.isExternalLibraryImport === true : !specifier.startsWith(".");
      edges.push({
        from: repoPath(root, file),
        to: resolved && !external ? repoPath(root, resolved.resolvedFileName) : undefined,
        specifier,
        external,
      });
    }
  }
  return { files: files.map((file) => repoPath(root, file)), edges };
}

export interface Cycle {
  /** One shortest cycle, its first node repeated at the end. */
  path: string[];
  /** Every node that lies on some cycle with it (its strongly connected component), sorted. */
  members: string[];
}

/** Every group of mutually dependent nodes, each with one cycle through it as the example. */
export function findCycles(edges: ReadonlyArray<{ from: string; to: string }>): Cycle[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  return stronglyConnected(next)
    .filter((component) => component.length > 1 || next.get(component[0])?.includes(component[0]))
    .map((members) => ({ path: cycleWithin(new Set(members), next), members }));
}

/** Tarjan's algorithm, iterative so a deep graph cannot overflow the stack. */
function stronglyConnected(next: Map<string, string[]>): string[][] {
  const nodes = new Set([...next.keys(), ...[...next.values()].flat()]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of [...nodes].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++];
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

/** A shortest way from the component's first node back to itself, staying inside the component. */
function cycleWithin(component: Set<string>, next: Map<string, string[]>): string[] {
  const start = [...component][0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of next.get(node) ?? []) {
      if (!component.has(child)) continue;
      if (child === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0])!);
        return [...path, start];
      }
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  throw new Error(`no cycle through ${start}, yet it is in a strongly connected component`);
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  return ts.parseJsonConfigFileContent(config, ts.sys, dirname(configPath)).options;
}

function repoPath(root: string, file: string): string {
  return relative(root, file).split(sep).join("/");
}

/**
 * How many floors the rooms of `folder` stand on: a file directly in it is a room, each subfolder
 * one room (its files import each other inside it), and a room stands one floor above the highest
 * room it imports. Imports leaving the folder are not counted. The longest chain of rooms is
 * returned with it, top first; `leaveOut` names rooms (a file name, or a subfolder ending in `/`)
 * measured apart. The graph must have no cycle (see findCycles).
 */
export function floorsOf(
  edges: ReadonlyArray<{ from: string; to: string }>,
  folder: string,
  leaveOut: readonly string[] = [],
): { floors: number; chain: string[] } {
  const prefix = folder.endsWith("/") ? folder : `${folder}/`;
  const roomOf = (path: string) => {
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf("/");
    return slash < 0 ? rest : rest.slice(0, slash + 1);
  };
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!from.startsWith(prefix) || !to.startsWith(prefix)) continue;
    const [a, b] = [roomOf(from), roomOf(to)];
    if (leaveOut.includes(a) || leaveOut.includes(b)) continue;
    next.set(a, next.get(a) ?? new Set());
    next.set(b, next.get(b) ?? new Set());
    if (a !== b) next.get(a)!.add(b);
  }
  const chains = new Map<string, string[]>();
  const chainFrom = (room: string): string[] => {
    const known = chains.get(room);
    if (known) return known;
    let below: string[] = [];
    for (const imported of next.get(room) ?? []) {
      const chain = chainFrom(imported);
      if (chain.length > below.length) below = chain;
    }
    const chain = [room, ...below];
    chains.set(room, chain);
    return chain;
  };
  let longest: string[] = [];
  for (const room of [...next.keys()].sort()) {
    const chain = chainFrom(room);
    if (chain.length > longest.length) longest = chain;
  }
  return { floors: longest.length, chain: longest };
}
