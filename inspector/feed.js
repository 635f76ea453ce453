// The inspector's live feed, with no DOM: server-sent events read over fetch (so the token goes in
// an Authorization header, never in a URL), resumed after a drop with Last-Event-ID.

/** Splits an event stream into events ({id, event, data}) as chunks of text arrive. */
export class SseParser {
  constructor() {
    this.buffer = "";
    /** @type {{ id?: string, event?: string, data: string[] }} */
    this.pending = { data: [] };
  }

  /** @returns {{ id?: string, event: string, data: string }[]} the events completed by this chunk */
  push(chunk) {
    this.buffer += chunk;
    const events = [];
    let end;
    while ((end = this.buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        if (this.pending.data.length > 0) events.push({ id: this.pending.id, event: this.pending.event ?? "message", data: this.pending.data.join("\n") });
        this.pending = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") this.pending.data.push(value);
      else if (field === "event") this.pending.event = value;
      else if (field === "id") this.pending.id = value;
    }
    return events;
  }
}

/**
 * Follows the feed at `url` until `stop()`: each event's data (parsed JSON) goes to `onEvent(type,
 * data)`; `onState("open" | "retrying" | "refused", detail)` says how it goes. A refusal (401, 403)
 * stops it: retrying would not help. Anything else is retried after `retryMs`, from the last event.
 * @param {{ url: string, token?: string, onEvent: (type: string, data: any) => void, onState?: (state: string, detail?: string) => void, retryMs?: number, fetch?: typeof fetch }} options
 */
export function followFeed(options) {
  const doFetch = options.fetch ?? fetch;
  const controller = new AbortController();
  let lastEventId;
  let stopped = false;
  const state = (name, detail) => options.onState?.(name, detail);

  async function once() {
    const headers = { accept: "text/event-stream" };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    const response = await doFetch(options.url, { headers, signal: controller.signal, cache: "no-store" });
    if (response.status === 401 || response.status === 403) {
      let message = `HTTP ${response.status}`;
      try {
        message = (await response.json()).message ?? message;
      } catch {}
      return { refused: message };
    }
    if (!response.ok || !response.body) return { retry: `HTTP ${response.status}` };
    state("open");
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { retry: "the feed ended" };
      for (const event of parser.push(value)) {
        if (event.id !== undefined) lastEventId = event.id;
        options.onEvent(event.event, JSON.parse(event.data));
      }
    }
  }

  const done = (async () => {
    while (!stopped) {
      let outcome;
      try {
        outcome = await once();
      } catch (err) {
        outcome = { retry: err instanceof Error ? err.message : String(err) };
      }
      if (stopped) return;
      if (outcome.refused) {
        state("refused", outcome.refused);
        return;
      }
      state("retrying", outcome.retry);
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 1000));
    }
  })();

  return {
    stop() {
      stopped = true;
      controller.abort();
      return done;
    },
    done,
  };
}
