import type { MessageUpdateEvent, StreamDelta } from '../types/events.js';
import { blockText } from '../types/block-text.js';

/**
 * Consecutive deltas to one block of one loop's streaming message, gathered to be handed on as
 * one update (what a late subscriber catches up on, what a view state folds when it is read): its
 * delta the text of them all, its message and time the last one's. A run of one delta hands on
 * its update itself.
 *
 * Nothing is kept per delta. A text or thinking delta joins when it has no field but its kind,
 * block and text, and the block's text in its snapshot is longer by exactly the delta than in the
 * one before (the first one's snapshot must end with it): the last snapshot then holds the text of
 * them all, and it is read from there. Later texts are trusted by their lengths (a rope is not
 * read per delta, which would flatten it): a provider whose snapshot changes a text's characters
 * without changing its length would be handed on with the characters of its later snapshot; one
 * whose snapshot lags behind its deltas starts a new run.
 * A tool-argument delta joins when it names no id or name; its text is kept (a snapshot holds
 * the arguments parsed, not their JSON).
 *
 * One run may be kept by several (a `BasicAgent` run's replay log and the agent's view state
 * share the runs its follower gathers, so a delta is looked at once). One who hands a run on
 * before it has ended either {@link close}s it (the next delta begins a new one for all) or
 * gathers the rest of it on its own.
 */
export class DeltaRun {
  readonly type = 'DeltaRun';
  /** The deltas' kind and block, copied here: a delta is compared with nothing else of the run. */
  private readonly kind: StreamDelta['type'];
  private readonly contentIndex: number;
  /** The run's last update. */
  private last: MessageUpdateEvent;
  /** Text and thinking: the block's text length after the last delta; tool arguments: 0 (-1: none may join). */
  private length: number;
  /** Whether another delta may join. */
  private open: boolean;
  /** Text and thinking: where the run's text begins in the block's text. */
  private readonly from: number;
  /** Tool arguments: the first delta (with the call's id and name), then the deltas' texts. */
  private readonly first: StreamDelta | undefined;
  private pieces: string[] | undefined;
  /** Whether a delta joined the first. */
  private joined = false;

  private constructor(readonly loopId: string, update: MessageUpdateEvent, from: number, length: number) {
    const delta = update.delta;
    this.kind = delta.type;
    this.contentIndex = delta.contentIndex;
    this.last = update;
    this.from = from;
    this.length = length;
    this.open = length >= 0;
    this.first = delta.type === 'toolCall' ? delta : undefined;
  }

  /** The run `update` begins. */
  static of(update: MessageUpdateEvent): DeltaRun {
    const delta = update.delta;
    if (delta.type === 'toolCall') return new DeltaRun(update.loopId, update, 0, argumentsOnly(delta) ? 0 : -1);
    // Others may join when the snapshot's text ends with this delta (read once per run).
    const text = keyCount(delta) === 3 ? blockText(update.message.content[delta.contentIndex], delta.type) : undefined;
    const length = text !== undefined && text.endsWith(delta.delta) ? text.length : -1;
    return new DeltaRun(update.loopId, update, length - delta.delta.length, length);
  }

  /** Adds `update` to the run when it continues it (see the class); returns whether it did. */
  add(update: MessageUpdateEvent): boolean {
    const delta = update.delta;
    const length = this.length;
    if (!this.open || update.loopId !== this.loopId || delta.type !== this.kind || delta.contentIndex !== this.contentIndex) return false;
    if (delta.type === 'toolCall') {
      if (delta.id !== undefined || delta.name !== undefined || keyCount(delta) !== 3) return false;
      (this.pieces ??= [this.first!.delta]).push(delta.delta);
    } else {
      if (blockText(update.message.content[delta.contentIndex], delta.type)?.length !== length + delta.delta.length || keyCount(delta) !== 3) return false;
      this.length = length + delta.delta.length;
    }
    this.last = update;
    this.joined = true;
    return true;
  }

  /** Ends the run: no delta joins it any more (one who has handed it on keeps it as it is now). */
  close(): void {
    this.open = false;
  }

  /** The one update the run's deltas add up to. */
  update(): MessageUpdateEvent {
    const last = this.last;
    if (!this.joined) return last;
    const first = this.first;
    if (first !== undefined) return { ...last, delta: { ...first, delta: this.pieces!.join('') } };
    const kind = this.kind as 'text' | 'thinking';
    const block = last.message.content[this.contentIndex] as unknown as Record<string, string>;
    return { ...last, delta: { type: kind, contentIndex: this.contentIndex, delta: block[kind]!.slice(this.from, this.length) } };
  }
}

/** Whether a tool-argument delta has no field but its kind, block, text, id and name. */
function argumentsOnly(delta: StreamDelta): boolean {
  for (const key in delta) if (key !== 'type' && key !== 'contentIndex' && key !== 'delta' && key !== 'id' && key !== 'name') return false;
  return true;
}

function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}
