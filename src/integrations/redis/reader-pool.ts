import { entriesOfXRead, type RedisCommander, type StreamEntry } from './commands.js';

/** A connection a relay reads runs with (blocking `XREAD`), closed when the relay closes. */
export interface RedisReader extends RedisCommander {
  close(): Promise<unknown> | unknown;
}

/** One `XREAD BLOCK` asked of the pool: a stream, the id to read after, and its answer. */
interface Waiter {
  readonly key: string;
  readonly after: StreamPosition;
  readonly count: number;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
  timer?: ReturnType<typeof setTimeout>;
}

type StreamPosition = readonly [bigint, bigint];

/** One pooled connection and the reads waiting on it. */
interface Lane {
  reader?: Promise<{ reader: RedisReader; id: string | undefined }>;
  readonly waiters: Set<Waiter>;
  running: boolean;
  /** What the `XREAD` in flight reads: per key, the id it reads after. */
  inFlight?: Map<string, StreamPosition>;
  closed: boolean;
}

/**
 * Blocking stream reads of many clients over a bounded pool of Redis connections: a
 * {@link RedisCommander} whose `XREAD … BLOCK ms STREAMS key id` (what `readStream` sends) waits
 * with the other clients' reads of the same connection in one `XREAD` over all their streams
 * (each stream read from the oldest id asked, each client answered with the entries after its
 * own id), a stream always on the same connection. A read joining a connection that is blocked
 * interrupts it (`CLIENT UNBLOCK`, sent on `client`) when the read in flight does not cover it.
 * Every other command goes to `client`. Connections are opened on first use, `size` at most.
 */
export class RedisReaderPool implements RedisCommander {
  private readonly lanes: Lane[];

  constructor(
    private readonly client: RedisCommander,
    private readonly open: () => Promise<RedisReader>,
    size = 4,
    private readonly laneBlockMs = 5000,
  ) {
    if (!(Number.isInteger(size) && size >= 1)) throw new RangeError(`RedisReaderPool: size must be a whole number >= 1, got ${size}`);
    this.lanes = Array.from({ length: size }, () => ({ waiters: new Set<Waiter>(), running: false, closed: false }));
  }

  sendCommand(args: string[]): Promise<unknown> {
    if (String(args[0]).toUpperCase() !== 'XREAD') return this.client.sendCommand(args);
    const [, countWord, count, blockWord, blockMs, streamsWord, key, after, ...more] = args;
    if (countWord?.toUpperCase() !== 'COUNT' || blockWord?.toUpperCase() !== 'BLOCK' || streamsWord?.toUpperCase() !== 'STREAMS' || key === undefined || after === undefined || more.length > 0) {
      return Promise.reject(new TypeError(`RedisReaderPool: only XREAD COUNT n BLOCK ms STREAMS key id is pooled, got ${args.join(' ')}`));
    }
    let from: StreamPosition;
    try {
      from = positionOf(after);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.read(key, from, Number(count), Number(blockMs));
  }

  /** Closes every pooled connection; reads still waiting are answered with no entries. */
  async close(): Promise<void> {
    await Promise.all(
      this.lanes.map(async (lane) => {
        lane.closed = true;
        for (const waiter of lane.waiters) settle(lane, waiter, null);
        const opened = await lane.reader?.catch(() => undefined);
        if (opened?.id !== undefined) await this.client.sendCommand(['CLIENT', 'UNBLOCK', opened.id]).catch(() => undefined);
        await Promise.resolve(opened?.reader.close()).catch(() => undefined);
      }),
    );
  }

  private read(key: string, after: StreamPosition, count: number, blockMs: number): Promise<unknown> {
    const lane = this.lanes[hash(key) % this.lanes.length]!;
    if (lane.closed) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { key, after, count: count > 0 ? count : 500, resolve, reject };
      waiter.timer = setTimeout(() => settle(lane, waiter, null), blockMs > 0 ? blockMs : this.laneBlockMs);
      lane.waiters.add(waiter);
      if (!lane.running) void this.run(lane);
      else if (!covers(lane.inFlight, waiter)) void this.unblock(lane);
    });
  }

  /** Reads for the lane's waiters until none is left. */
  private async run(lane: Lane): Promise<void> {
    lane.running = true;
    try {
      while (lane.waiters.size > 0 && !lane.closed) {
        lane.reader ??= this.openReader();
        let opened: { reader: RedisReader };
        try {
          opened = await lane.reader;
        } catch (e) {
          lane.reader = undefined;
          for (const waiter of lane.waiters) settle(lane, waiter, e, true);
          return;
        }
        const from = new Map<string, StreamPosition>();
        let count = 1;
        for (const w of lane.waiters) {
          const known = from.get(w.key);
          if (!known || compare(w.after, known) < 0) from.set(w.key, w.after);
          count = Math.max(count, w.count);
        }
        lane.inFlight = from;
        const keys = [...from.keys()];
        let reply: unknown;
        try {
          reply = await opened.reader.sendCommand(['XREAD', 'COUNT', String(count), 'BLOCK', String(this.laneBlockMs), 'STREAMS', ...keys, ...keys.map((k) => idOf(from.get(k)!))]);
        } catch (e) {
          // the connection failed: its reads fail (their clients get an error frame), the next read opens another
          lane.inFlight = undefined;
          lane.reader = undefined;
          void Promise.resolve(opened.reader.close()).catch(() => undefined);
          for (const waiter of lane.waiters) if (from.has(waiter.key)) settle(lane, waiter, e, true);
          continue;
        }
        lane.inFlight = undefined;
        const byKey = new Map(keys.map((k) => [k, entriesOfXRead(reply, k)]));
        for (const waiter of lane.waiters) {
          const mine = (byKey.get(waiter.key) ?? []).filter((e) => compare(positionOf(e.id), waiter.after) > 0).slice(0, waiter.count);
          if (mine.length > 0) settle(lane, waiter, [[waiter.key, mine.map(rawEntry)]]);
        }
      }
    } finally {
      lane.running = false;
      lane.inFlight = undefined;
    }
  }

  private async openReader(): Promise<{ reader: RedisReader; id: string | undefined }> {
    const reader = await this.open();
    const id = await reader.sendCommand(['CLIENT', 'ID']).then((v) => String(v), () => undefined);
    return { reader, id };
  }

  /** Interrupts the lane's blocked `XREAD` so that it starts again with the new waiter. */
  private async unblock(lane: Lane): Promise<void> {
    const opened = await lane.reader?.catch(() => undefined);
    if (opened?.id !== undefined) await this.client.sendCommand(['CLIENT', 'UNBLOCK', opened.id]).catch(() => undefined);
  }
}

function settle(lane: Lane, waiter: Waiter, value: unknown, failed = false): void {
  if (!lane.waiters.delete(waiter)) return;
  clearTimeout(waiter.timer);
  if (failed) waiter.reject(value);
  else waiter.resolve(value);
}

/** True when the read in flight reads the waiter's stream from its id or before. */
function covers(inFlight: Map<string, StreamPosition> | undefined, waiter: Waiter): boolean {
  const from = inFlight?.get(waiter.key);
  return from !== undefined && compare(from, waiter.after) <= 0;
}

function positionOf(id: string): StreamPosition {
  const [ms, seq] = id.split('-');
  if (!/^\d+$/.test(ms ?? '') || (seq !== undefined && !/^\d+$/.test(seq))) throw new TypeError(`RedisReaderPool: ${JSON.stringify(id)} is not a Redis stream id`);
  return [BigInt(ms!), BigInt(seq ?? 0)];
}

const idOf = ([ms, seq]: StreamPosition): string => `${ms}-${seq}`;

function compare(a: StreamPosition, b: StreamPosition): number {
  return a[0] === b[0] ? (a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1;
}

function rawEntry(entry: StreamEntry): [string, string[]] {
  return [entry.id, Object.entries(entry.fields).flat()];
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return Math.abs(h);
}
