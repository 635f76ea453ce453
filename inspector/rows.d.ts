// Types of rows.js for the TypeScript tests (the page loads the .js as it is).
export interface RowFrame {
  seq: number;
  connection: string;
  dialect: string;
  direction: string;
  method?: string;
  session?: string;
  message?: string;
  verdict: { status: string };
}
export type Row<F extends RowFrame = RowFrame> = { type: "frame"; frame: F } | { type: "stream"; key: string; frames: F[]; status: string };
export function messageOf(frame: RowFrame): unknown;
export function streamKey(frame: RowFrame): string | undefined;
export function collapseFrames<F extends RowFrame>(frames: F[]): Row<F>[];
export function streamedText(row: { frames: RowFrame[] }): string;
