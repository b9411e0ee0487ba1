import { Observable, type Observer, type Subscriber, type SubjectLike, type Unsubscribable } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent, StreamDelta } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { ChunkList } from './chunk-list.js';

/**
 * A copy of a streamed message as it starts, down to what a provider may change in place while it
 * streams (the content array, its blocks, a tool call's arguments, the usage): a structured clone
 * of each of a run's messages cost more than the rest of the replay.
 */
function copyOfStart(message: AssistantMessage): AssistantMessage {
  const content = message.content.map((block) => (block.type === 'toolCall' ? { ...block, arguments: { ...block.arguments } } : { ...block }));
  return { ...message, content, usage: { ...message.usage } };
}

/**
 * A kept entry: an event as it was, a delta, a {@link TextSource}, or a number: a non-negative
 * integer is a text or thinking delta to the block of the delta before (same kind, no other
 * field) of that many characters, its text read from the source before it; a negative one is the
 * time of the deltas after it, when it changed (`-1 - n` ms after the log's first delta kept:
 * mostly a small integer, kept in the array slot itself). A time that is not a whole number of ms
 * after the first, or that the first one plus a difference does not give back exactly, is kept as
 * a {@link TimeMark}.
 */
type Entry = AgentEvent | StreamDelta | number | TimeMark | TextSource;

/** The time of the deltas after it, as it was. */
interface TimeMark {
  readonly type?: undefined;
  readonly time: number;
}

/**
 * Where the texts of the deltas kept as lengths after it are read: the last snapshot of the run of
 * updates that each followed the one before (it holds every text they added, see {@link follows});
 * set when that run ends, `undefined` while it goes on (the log's latest snapshot is then it).
 */
interface TextSource {
  readonly type: 'TextSource';
  message: AssistantMessage | undefined;
}

/** The events of one run, updates kept compact (see {@link RunReplay}, which extends it: the log's fields sit in the replay itself, one object fewer read per event). */
class EventLog {
  private readonly entries = new ChunkList<Entry>();
  /** The time of the last delta kept compact (NaN: none yet), and what the times kept as numbers count from. */
  private time = Number.NaN;
  private timeBase: number | undefined;
  /** The message of the last event kept, while that event is a MessageStart, MessageUpdate or MessageReset. */
  private message: AssistantMessage | undefined;
  /** The source of the texts kept as lengths since the updates began to follow one another (none kept yet: `undefined`). */
  private source: TextSource | undefined;
  private loopId = '';
  /** The kind and block of the last delta kept, copied here (the delta itself is a likely cache miss with hundreds of runs interleaved); `''`: none. */
  private deltaKind: StreamDelta['type'] | '' = '';
  private deltaIndex = -1;
  /** Whether that delta has no field but its kind, block and text (a delta after it may then be kept as its length). */
  private plain = false;
  /** The number of fields of `message`, or -1 when not counted. */
  private keys = -1;

  protected push(event: AgentEvent): void {
    const previous = this.message;
    if (event.type === 'MessageUpdate' && previous !== undefined && event.loopId === this.loopId) {
      const keys = follows(previous, this.keys, event);
      if (keys >= 0) {
        const delta = event.delta;
        const plain = keyCount(delta) === 3;
        // A text or thinking delta to the block of the one before, both with no other field: kept as its length.
        const sameBlock = delta.type !== 'toolCall' && delta.type === this.deltaKind && delta.contentIndex === this.deltaIndex;
        if (event.timestamp !== this.time) this.entries.push(this.timeMark(event.timestamp));
        if (this.plain && plain && sameBlock) {
          if (this.source === undefined) this.entries.push((this.source = { type: 'TextSource', message: undefined }));
          this.entries.push(delta.delta.length);
        } else {
          this.entries.push(delta);
        }
        this.message = event.message;
        this.keys = keys;
        this.plain = plain;
        this.deltaKind = delta.type;
        this.deltaIndex = delta.contentIndex;
        return;
      }
    }
    this.closeSource();
    this.entries.push(event);
    const streaming = isStreaming(event);
    this.message = streaming && event.message.role === 'assistant' ? (event.message as AssistantMessage) : undefined;
    this.keys = -1;
    this.loopId = streaming ? event.loopId : '';
    const delta = event.type === 'MessageUpdate' ? event.delta : undefined;
    this.deltaKind = delta === undefined ? '' : delta.type;
    this.deltaIndex = delta === undefined ? -1 : delta.contentIndex;
    this.plain = delta !== undefined && keyCount(delta) === 3;
  }

  /** Ends the run of updates that followed one another: its last snapshot is where the texts kept as lengths are read. */
  private closeSource(): void {
    if (this.source === undefined) return;
    this.source.message = this.message;
    this.source = undefined;
  }

  /** The entry that says the deltas after it have time `time`. */
  private timeMark(time: number): number | TimeMark {
    this.time = time;
    const base = (this.timeBase ??= time);
    const after = time - base;
    return Number.isInteger(after) && after >= 0 && base + after === time ? -1 - after : { time };
  }

  /** Drops everything kept (no one can ask for it any more). */
  protected forget(): void {
    this.entries.clear();
    this.message = undefined;
    this.source = undefined;
  }

  /** Delivers every entry kept so far (and any kept while it delivers), compact ones rebuilt. */
  protected replay(to: { next(event: AgentEvent): void; readonly closed: boolean }): void {
    const entries = this.entries;
    let message: AssistantMessage | undefined;
    let source: TextSource | undefined;
    let loopId = '';
    let delta: StreamDelta | undefined;
    let time = 0;
    for (let i = 0; i < entries.length && !to.closed; i++) {
      const entry = entries.at(i);
      let event: AgentEvent;
      if (typeof entry === 'number') {
        if (entry < 0) {
          time = this.timeBase! + (-1 - entry);
          continue;
        }
        // A run still going reads its texts from the latest snapshot (kept while this replay delivers, too): each holds the texts before it.
        delta = { ...delta!, delta: shownText(source!.message ?? this.message!, message!, delta!, entry) } as StreamDelta;
        message = applied(message!, delta);
        event = { type: 'MessageUpdate', loopId, message, delta, timestamp: time };
      } else if (isDelta(entry)) {
        delta = entry;
        message = applied(message!, delta);
        event = { type: 'MessageUpdate', loopId, message, delta, timestamp: time };
      } else if (entry.type === undefined) {
        time = entry.time;
        continue;
      } else if (entry.type === 'TextSource') {
        source = entry;
        continue;
      } else {
        event = entry;
        const streaming = isStreaming(entry);
        message = streaming ? (entry.message as AssistantMessage) : undefined;
        loopId = streaming ? entry.loopId : '';
        delta = entry.type === 'MessageUpdate' ? entry.delta : undefined;
      }
      to.next(event);
    }
  }
}

/** The text of a delta of `length` characters to `delta`'s block of `message`: what `source` holds after that block's text so far. */
function shownText(source: AssistantMessage, message: AssistantMessage, delta: StreamDelta, length: number): string {
  const field = delta.type;
  const from = (message.content[delta.contentIndex] as unknown as Record<string, string>)[field]!.length;
  return (source.content[delta.contentIndex] as unknown as Record<string, string>)[field]!.slice(from, from + length);
}

/**
 * The subject behind a shared run ({@link shareRun}): every subscriber gets the events it missed,
 * replayed, then the live ones — like a `ReplaySubject`, but without holding every event alive.
 * A streamed message's `MessageUpdate` events each carry a snapshot (message, content array,
 * changed block); keeping thousands of them for a subscriber that may never come is what made a
 * hot run slow (they all outlive the young generation). So an update whose snapshot is the
 * previous one with the delta applied — the same message fields, the same other blocks, the
 * changed block's text longer by exactly the delta — is kept as its delta alone and its timestamp
 * (when it continues the block of the delta before it, as its text's length alone: a number in
 * the log's array, no object; its text is read back from the last snapshot of those that followed
 * one another, which holds it); a late subscriber gets it rebuilt from the snapshot before it,
 * equal to the one emitted. Texts are trusted by their lengths, as {@link follows} compares them:
 * a provider whose snapshot changes a text's characters without changing its length, with no
 * other change, is replayed with the characters of its later snapshot. Any other update (a new tool
 * call, a changed usage or signature, another loop's) is kept as it was. An assistant
 * `MessageStart` is passed on (and kept) with its message copied, as it was when emitted, so that
 * a late fold of the deltas does not count them twice.
 */
export class RunReplay extends EventLog implements SubjectLike<AgentEvent> {
  /** The subscribers following live; replaced, never changed in place, so that a delivery can go on over the list it began with. */
  private live: ReadonlyArray<Subscriber<AgentEvent>> = [];
  /** The one live subscriber, while there is exactly one (an event then reads no array). */
  private only: Subscriber<AgentEvent> | undefined;
  private ending: { error: unknown } | 'complete' | undefined;
  /** Whether events are still kept for a later subscriber (see `handle`). */
  private keeping = true;

  /**
   * `handle`: the shared run's Observable, held weakly. Once it is collected no later subscriber
   * can come, so nothing more is kept and what was is dropped (looked at with each event but the
   * deltas). Without one, everything is kept.
   */
  constructor(private readonly handle?: WeakRef<object>) {
    super();
  }

  next(value: AgentEvent): void {
    if (this.ending) return;
    // The hot path (a delta) reads nothing but this object; other events also check whether to keep on keeping.
    if (value.type !== 'MessageUpdate') return this.nextOther(value);
    if (this.keeping) this.push(value);
    this.deliver(value);
  }

  private nextOther(value: AgentEvent): void {
    let event = value;
    if (this.keeping && this.handle !== undefined && this.handle.deref() === undefined) {
      this.keeping = false;
      this.forget();
    } else if (this.keeping) {
      if (value.type === 'MessageStart' && value.message.role === 'assistant') event = { ...value, message: copyOfStart(value.message as AssistantMessage) };
      this.push(event);
    }
    this.deliver(event);
  }

  private deliver(event: AgentEvent): void {
    const only = this.only;
    if (only !== undefined) return only.next(event);
    const live = this.live;
    for (let i = 0; i < live.length; i++) live[i]!.next(event);
  }

  error(err: unknown): void {
    if (this.ending) return;
    this.ending = { error: err };
    const live = this.following([]);
    for (const subscriber of live) subscriber.error(err);
  }

  complete(): void {
    if (this.ending) return;
    this.ending = 'complete';
    const live = this.following([]);
    for (const subscriber of live) subscriber.complete();
  }

  /** Whether the run has completed or failed. */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  subscribe(observer: Partial<Observer<AgentEvent>>): Unsubscribable {
    return new Observable<AgentEvent>((subscriber) => {
      this.attach(subscriber);
      return () => this.detach(subscriber);
    }).subscribe(observer);
  }

  /** Replays what `subscriber` missed, then ends it (the run has ended) or follows the run live. */
  attach(subscriber: Subscriber<AgentEvent>): void {
    this.replay(subscriber);
    if (subscriber.closed) return;
    const ending = this.ending;
    if (ending === 'complete') subscriber.complete();
    else if (ending) subscriber.error(ending.error);
    else this.following([...this.live, subscriber]);
  }

  detach(subscriber: Subscriber<AgentEvent>): void {
    if (this.live.includes(subscriber)) this.following(this.live.filter((s) => s !== subscriber));
  }

  /** Makes `live` the subscribers following; returns those who were. */
  private following(live: ReadonlyArray<Subscriber<AgentEvent>>): ReadonlyArray<Subscriber<AgentEvent>> {
    const was = this.live;
    this.live = live;
    this.only = live.length === 1 ? live[0] : undefined;
    return was;
  }
}

type StreamingEvent = Extract<AgentEvent, { type: 'MessageStart' | 'MessageUpdate' | 'MessageReset' }>;

/** The events a message's updates build on. */
function isStreaming(event: AgentEvent): event is StreamingEvent {
  return event.type === 'MessageStart' || event.type === 'MessageUpdate' || event.type === 'MessageReset';
}

function isDelta(entry: AgentEvent | StreamDelta | TimeMark | TextSource): entry is StreamDelta {
  return entry.type === 'text' || entry.type === 'thinking' || entry.type === 'toolCall';
}

/**
 * Whether an update's snapshot is `previous` with its delta applied as {@link applied} does: a
 * tool-argument delta shows the previous snapshot itself; a text or thinking delta changes one
 * block's text by exactly the delta's length and nothing else (texts are compared by length: a
 * rope is not read, which would flatten it). Returns the snapshot's number of fields when it
 * follows (`previousKeys`: `previous`'s, or -1 when not yet counted), or -1 when it does not.
 */
function follows(previous: AssistantMessage, previousKeys: number, update: MessageUpdateEvent): number {
  const { message, delta } = update;
  if (delta.type === 'toolCall') return message !== previous ? -1 : previousKeys >= 0 ? previousKeys : keyCount(previous);
  if (message === previous) return -1;
  const keys = keyCount(message);
  if (keys !== (previousKeys >= 0 ? previousKeys : keyCount(previous)) || !sameFields(message, previous, keys)) return -1;
  const index = delta.contentIndex;
  const before = previous.content;
  const after = message.content;
  if (after.length !== (index === before.length ? index + 1 : before.length) || index > before.length) return -1;
  for (let i = 0; i < after.length; i++) if (i !== index && after[i] !== before[i]) return -1;
  const block = after[index] as unknown as Record<string, unknown>;
  const field = delta.type;
  const was = before[index] as unknown as Record<string, unknown> | undefined;
  const text = block[field];
  if (block.type !== field || typeof text !== 'string') return -1;
  if (was === undefined) return keyCount(block) === 2 && text.length === delta.delta.length ? keys : -1;
  const wasText = was[field];
  if (was.type !== field || typeof wasText !== 'string' || text.length !== wasText.length + delta.delta.length) return -1;
  let blockKeys = 0;
  for (const key in block) {
    blockKeys++;
    if (key !== field && block[key] !== was[key]) return -1;
  }
  return blockKeys === keyCount(was) ? keys : -1;
}

/**
 * Whether two messages with `keys` fields each hold the same values in every field but `content`:
 * the fields of an AssistantMessage by name (what the builder's snapshots have), any other field
 * one by one.
 */
function sameFields(message: AssistantMessage, previous: AssistantMessage, keys: number): boolean {
  if (message.role !== previous.role || message.stopReason !== previous.stopReason || message.model !== previous.model) return false;
  if (message.provider !== previous.provider || message.usage !== previous.usage || message.timestamp !== previous.timestamp) return false;
  if (message.errorMessage !== previous.errorMessage) return false;
  const named = 'role' in message && 'content' in message && 'stopReason' in message && 'model' in message && 'provider' in message && 'usage' in message && 'timestamp' in message;
  if (named && keys === (message.errorMessage === undefined ? 7 : 8)) return true; // no other field
  for (const key in message) {
    if (key !== 'content' && message[key as keyof AssistantMessage] !== previous[key as keyof AssistantMessage]) return false;
  }
  return true;
}

/** `message` with a text or thinking delta appended to its block (a new block when there is none); a tool-argument delta changes nothing. */
function applied(message: AssistantMessage, delta: StreamDelta): AssistantMessage {
  if (delta.type === 'toolCall') return message;
  const field = delta.type;
  const content = message.content.slice();
  const was = content[delta.contentIndex] as unknown as Record<string, string> | undefined;
  content[delta.contentIndex] = (was ? { ...was, [field]: was[field] + delta.delta } : { type: delta.type, [field]: delta.delta }) as unknown as AssistantMessage['content'][number];
  return { ...message, content };
}

function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}
