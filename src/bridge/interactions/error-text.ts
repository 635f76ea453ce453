/** The message of whatever was thrown, for logs and tool results. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
