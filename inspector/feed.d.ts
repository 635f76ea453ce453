// Types of feed.js for the TypeScript tests (the page loads the .js as it is).
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}
export class SseParser {
  push(chunk: string): SseEvent[];
}
export interface FeedOptions {
  url: string;
  token?: string;
  onEvent(type: string, data: any): void;
  onState?(state: "open" | "retrying" | "refused", detail?: string): void;
  retryMs?: number;
  fetch?: typeof fetch;
}
export function followFeed(options: FeedOptions): { stop(): Promise<void>; done: Promise<void> };
