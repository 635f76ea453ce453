/** Reading values whose type nobody vouches for: parsed JSON, and whatever was thrown. */

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The message of whatever was thrown, for logs, error answers and tool results. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A failed file or stream operation in a line: its system code (ENOENT, EACCES…) when it has one, else its message. */
export const systemErrorText = (error: unknown): string => (error as NodeJS.ErrnoException | undefined)?.code ?? errorText(error);
