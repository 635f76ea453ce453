// Types of render.js for the TypeScript tests (the page loads the .js as it is).
export function formatDuration(ms: number): string;
export function verdictText(verdict: { status: string; issues: { pointer: string; message: string }[] }): string;
export const HUNG_AFTER_MS: number;
export function directionWord(direction: string | undefined): "in" | "out" | "?";
export function ciCommand(connectionId: string): string;
