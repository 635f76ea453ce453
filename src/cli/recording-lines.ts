import type { Dialect } from "../registry/model.js";

/**
 * The two kinds of line a recording (`serve --record`, `--record FILE`) holds besides messages:
 * its header, which names the dialect of the whole file, and text a peer sent that was not JSON,
 * kept as it came under `text`.
 */

const DIALECTS = new Set<string>(["tau", "ask", "codex", "acp"]);

/** The dialect a recording's header line names, or undefined when the line is no header. */
export function recordingDialect(text: string): Dialect | undefined {
  if (!text.includes('"recording"')) return undefined;
  try {
    const value = JSON.parse(text) as { recording?: { dialect?: unknown }; message?: unknown };
    const dialect = value?.recording?.dialect;
    return !("message" in value) && typeof dialect === "string" && DIALECTS.has(dialect) ? (dialect as Dialect) : undefined;
  } catch {
    return undefined;
  }
}

/** The text of a recorded line that carries unparsed text instead of a message, or undefined. */
export function recordedText(text: string): string | undefined {
  if (!text.includes('"text"')) return undefined;
  try {
    const value = JSON.parse(text) as { direction?: unknown; text?: unknown; message?: unknown };
    return typeof value === "object" && value !== null && !("message" in value) && (value.direction === "client" || value.direction === "server") && typeof value.text === "string"
      ? value.text
      : undefined;
  } catch {
    return undefined;
  }
}
