/**
 * What phi-rx/redis needs of a Redis client: one command at a time, raw (RESP2) replies, run in the
 * order they were sent. A node-redis client (`createClient()` from `redis`, an optional peer) fits
 * as it is; for ioredis pass `{ sendCommand: ([name, ...args]) => client.call(name, ...args) }`.
 *
 * A source that blocks (`XREAD BLOCK`) holds its connection while it waits: give each reader a
 * connection of its own (node-redis: `client.duplicate()`), never the one appending.
 */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

/** One entry of a stream: its id and its fields as a record. */
export interface StreamEntry {
  readonly id: string;
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * The entries of one stream in an `XREAD` reply (none when the block timed out). Takes the RESP2
 * shape (`[[key, entries]]`) and the RESP3 map (a Map, or an object keyed by stream, as node-redis
 * gives it).
 */
export function entriesOfXRead(reply: unknown, key: string): StreamEntry[] {
  if (reply === null || reply === undefined) return [];
  return entriesOf(streamOf(reply, key), key);
}

function streamOf(reply: unknown, key: string): unknown {
  if (Array.isArray(reply)) return (reply.find((s: unknown) => Array.isArray(s) && String(s[0]) === key) as unknown[] | undefined)?.[1];
  if (reply instanceof Map) return reply.get(key);
  if (typeof reply === 'object') return (reply as Record<string, unknown>)[key];
  throw new TypeError(`XREAD ${key}: expected an array or map reply, got ${typeof reply}`);
}

/** Entries in the shape XRANGE replies with: `[[id, [field, value, …]], …]`. */
export function entriesOf(entries: unknown, key: string): StreamEntry[] {
  if (entries === null || entries === undefined) return [];
  if (!Array.isArray(entries)) throw new TypeError(`Redis stream "${key}": expected a list of entries, got ${typeof entries}`);
  return entries.map((entry: unknown, i) => {
    if (!Array.isArray(entry) || !Array.isArray(entry[1])) throw new TypeError(`Redis stream "${key}": entry ${i} is not [id, fields]`);
    const flat = entry[1] as unknown[];
    const fields: Record<string, string> = {};
    for (let f = 0; f + 1 < flat.length; f += 2) fields[String(flat[f])] = String(flat[f + 1]);
    return { id: String(entry[0]), fields };
  });
}

const STREAM_ID = /^\d+(-\d+)?$/;

/** Throws a clear error unless `id` is a stream id (`ms-seq` or `ms`) a reader can resume after. */
export function checkStreamId(id: string, what: string): string {
  if (!STREAM_ID.test(id)) throw new TypeError(`${what}: ${JSON.stringify(id)} is not a Redis stream id (ms-seq, e.g. "1700000000000-0")`);
  return id;
}

/**
 * Appends entries numbered by a counter kept next to the stream (`<key>:seq`), atomically (one
 * script), so that readers can tell a gap from a quiet stream. ARGV: maxLen, then per entry the
 * count of its field/value strings and those strings. Replies with the last entry's id.
 */
export const XADD_NUMBERED = `local i = 2
local last
while i <= #ARGV do
  local count = tonumber(ARGV[i])
  local n = redis.call('INCR', KEYS[2])
  last = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'seq', n, unpack(ARGV, i + 1, i + count))
  i = i + 1 + count
end
return last`;

/** SHA-1 of XADD_NUMBERED, for `EVALSHA` (checked against Redis's own `SCRIPT LOAD` reply in the tests). */
export const XADD_NUMBERED_SHA = '43f14f251e9aa4e7b4d6db20f2ff40447c4a7f25';

/** The counter key of a stream appended with XADD_NUMBERED. */
export const seqKeyOf = (streamKey: string): string => `${streamKey}:seq`;

/** The `seq` of the entry with this id, or undefined when there is no such entry (never was, or trimmed). */
export async function seqOfEntry(client: RedisCommander, streamKey: string, id: string): Promise<number | undefined> {
  const reply = await client.sendCommand(['XRANGE', streamKey, id, id]);
  const entries = entriesOf(reply, streamKey);
  return entries[0] ? seqField(streamKey, entries[0]) : undefined;
}

export function seqField(streamKey: string, entry: StreamEntry): number {
  const seq = Number(entry.fields['seq']);
  if (!Number.isSafeInteger(seq) || seq < 1) {
    throw new TypeError(`Redis stream "${streamKey}" entry ${entry.id}: no valid seq field (was it appended by appendToStream?)`);
  }
  return seq;
}
