/**
 * A map from structure keys to what they were compiled to, bounded in entries and in the length of
 * its keys (the oldest used goes first), so that schemas made per request with values of their own
 * cannot make it grow without bound.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxChars: number,
  ) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // The most recently used last: the last to go.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    if (key.length > this.maxChars) return;
    if (this.entries.delete(key)) this.chars -= key.length;
    this.entries.set(key, value);
    this.chars += key.length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
