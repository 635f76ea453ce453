import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from "yaml";
import { pointerKeys } from "../../../shared/json-pointer.js";

/**
 * A policy file's text as a document whose parts know their place: YAML, or JSON (which is read
 * strictly, with JSON.parse, and whose places come from reading the same text as YAML, JSON being
 * YAML's flow style). A problem is told as `line:column: reason`, 1-based, so an editor jumps to it.
 */

export interface Place {
  readonly line: number;
  readonly column: number;
}

export interface PolicyText {
  readonly value: unknown;
  /** Where the value a JSON Pointer names starts (its closest existing ancestor when it is absent). */
  placeOf(pointer: string): Place;
}

/** A problem found while reading the text, with its place. */
export class PolicyTextError extends Error {
  constructor(
    readonly place: Place,
    readonly reason: string,
  ) {
    super(`${place.line}:${place.column}: ${reason}`);
  }
}

/** JSON when the file is named .json or its text starts with `{`; YAML otherwise. */
export function readPolicyText(text: string, fileName: string): PolicyText {
  const json = /\.json$/i.test(fileName) || text.trimStart().startsWith("{");
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const [yamlError] = document.errors;
  const placeOfOffset = (offset: number): Place => {
    const at = lineCounter.linePos(offset);
    return { line: at.line, column: at.col };
  };
  let value: unknown;
  if (json) {
    try {
      value = JSON.parse(text);
    } catch (error) {
      // Node says where only in some versions and for some errors; YAML's reading of the same text always does.
      const position = /at position (\d+)/.exec((error as Error).message);
      const offset = position ? Number(position[1]) : (yamlError?.pos[0] ?? text.length);
      throw new PolicyTextError(placeOfOffset(offset), `not valid JSON: ${jsonReason(error as Error)}`);
    }
  } else {
    if (yamlError) throw new PolicyTextError(placeOfOffset(yamlError.pos[0]), `not valid YAML: ${yamlError.message.split("\n")[0]}`);
    value = document.toJS({ maxAliasCount: 50 });
  }
  return { value, placeOf: (pointer) => placeOfOffset(offsetOf(document, pointer)) };
}

/** JSON.parse's complaint without the text it quotes or the position (the place says where). */
function jsonReason(error: Error): string {
  const first = error.message.split("\n")[0]!.replace(/ in JSON at position \d+.*$/, "");
  const quoted = first.indexOf(', "');
  return quoted > 0 ? first.slice(0, quoted) : first.replace(/, \.\.\.".*$/, "");
}

/** Where the node a pointer names starts; the deepest node on its way when the rest is absent. */
function offsetOf(document: Document, pointer: string): number {
  let node: unknown = document.contents;
  let offset = rangeStart(node) ?? 0;
  for (const key of pointerKeys(pointer)) {
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === key);
      next = pair?.value ?? pair?.key;
    } else if (isSeq(node)) {
      next = /^\d+$/.test(key) ? node.items[Number(key)] : undefined;
    }
    const start = rangeStart(next);
    if (start === undefined) break;
    node = next;
    offset = start;
  }
  return offset;
}

const rangeStart = (node: unknown): number | undefined => (node as Node | undefined)?.range?.[0];
