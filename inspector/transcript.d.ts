// Types of transcript.js for the TypeScript tests (the page loads the .js as it is).
export function transcriptUrl(dialect: string): string;
export function transcriptSummary(name: string, result: { dialect?: string; lines: number; valid: number; invalid: number; sequenceGaps: number }): string;
