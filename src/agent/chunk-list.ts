/** Slots per chunk (a power of two: an index splits into chunk and slot with a shift and a mask). */
const SHIFT = 7;
const SIZE = 1 << SHIFT;
const MASK = SIZE - 1;

/**
 * An append-only list kept in chunks of a fixed size. A growing array copies everything it holds
 * each time it grows, and with hundreds of runs interleaved each of those copies outlives the young
 * generation: here what is appended is written once, into a chunk made at its full size.
 */
export class ChunkList<T> {
  private chunks: T[][] = [];
  /** The number of values appended. */
  length = 0;

  push(value: T): void {
    const slot = this.length & MASK;
    if (slot === 0) this.chunks.push(new Array<T>(SIZE));
    this.chunks[this.length >> SHIFT]![slot] = value;
    this.length++;
  }

  /** The value at `index` (`0 <= index < length`). */
  at(index: number): T {
    return this.chunks[index >> SHIFT]![index & MASK]!;
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}
