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
  const value = json ? strictJson(text) : undefined;
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (!json) {
    const [error] = document.errors;
    if (error) {
      const at = lineCounter.linePos(error.pos[0]);
      throw new PolicyTextError({ line: at.line, column: at.col }, `not valid YAML: ${error.message.split("\n")[0]}`);
    }
  }
  return {
    value: json ? value : document.toJS({ maxAliasCount: 50 }),
    placeOf: (pointer) => {
      const offset = offsetOf(document, pointer);
      const at = lineCounter.linePos(offset);
      return { line: at.line, column: at.col };
    },
  };
}

function strictJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : text.length;
    throw new PolicyTextError(placeAt(text, offset), `not valid JSON: ${message.replace(/ in JSON at position \d+.*$/, "")}`);
  }
}

function placeAt(text: string, offset: number): Place {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
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
