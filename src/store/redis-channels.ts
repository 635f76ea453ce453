import type { Redis } from "ioredis";
import type { Log } from "../shared/log.js";

/**
 * One subscriber connection shared by everything of a replica that listens live (Redis wants a
 * connection of its own for SUBSCRIBE). Channels are subscribed while they have listeners. After
 * the connection came back (ioredis subscribes again by itself) every listener hears `reconnected`,
 * because messages published meanwhile are lost and the listeners must catch up from the store.
 */
export class RedisChannels {
  private readonly listeners = new Map<string, Set<ChannelListener>>();
  private wasReady = false;

  constructor(
    private readonly subscriber: Redis,
    private readonly log: Log,
  ) {
    subscriber.on("message", (channel: string, message: string) => {
      for (const listener of [...(this.listeners.get(channel) ?? [])]) {
        try {
          listener.message(message);
        } catch (error) {
          this.log("error", "store channel listener failed", { channel, error: String(error) });
        }
      }
    });
    subscriber.on("ready", () => {
      if (this.wasReady) for (const set of this.listeners.values()) for (const listener of set) listener.reconnected();
      this.wasReady = true;
    });
  }

  async listen(channel: string, listener: ChannelListener): Promise<() => void> {
    let set = this.listeners.get(channel);
    if (!set) {
      this.listeners.set(channel, (set = new Set()));
      await this.subscriber.subscribe(channel);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        this.subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }
}

export interface ChannelListener {
  message(text: string): void;
  reconnected(): void;
}
