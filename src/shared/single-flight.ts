/**
 * Reads of one key made while one is under way share it: one read, one promise, whatever number of
 * callers. The promise is forgotten once it settles, so a read asked for after that reads again —
 * nothing is cached past the reads that overlapped (a failure reaches every caller that shared it).
 */
export class SingleFlight<T> {
  private readonly flying = new Map<string, Promise<T>>();

  read(key: string, read: () => Promise<T>): Promise<T> {
    const flying = this.flying.get(key);
    if (flying) return flying;
    const started = (async () => read())().finally(() => this.flying.delete(key));
    this.flying.set(key, started);
    return started;
  }
}
