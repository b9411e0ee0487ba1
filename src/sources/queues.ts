import type { Observable } from 'rxjs';
import { Broadcast } from './broadcast.js';
import type { AgentMessage } from '../types/message.js';
import type { QueueMode, SteeringPolicy } from '../types/config.js';

export interface QueuedMessage {
  message: AgentMessage;
  /** Overrides the agent's steering policy for this message. */
  policy?: SteeringPolicy;
}

/**
 * A steering or follow-up queue. Writers `push` from anywhere (a UI, another agent); the loop
 * `take`s at its checkpoints. `added$` lets `interrupt` steering react the moment a message
 * arrives instead of at the next checkpoint.
 */
export class MessageQueue {
  private items: QueuedMessage[] = [];
  private readonly added = new Broadcast<QueuedMessage>();
  /** Each message pushed, as it is pushed (hot; a {@link Broadcast}'s receiving side: `listenTo` it for a plain callback). */
  readonly added$: Observable<QueuedMessage> = this.added.asObservable();

  constructor(public mode: QueueMode = 'oneAtATime') {}

  push(message: AgentMessage, policy?: SteeringPolicy): void {
    const item: QueuedMessage = policy === undefined ? { message } : { message, policy };
    this.items.push(item);
    this.added.next(item);
  }

  /** Takes one message (`oneAtATime`) or all of them (`all`). */
  take(mode: QueueMode = this.mode): QueuedMessage[] {
    if (this.items.length === 0) return [];
    if (mode === 'all') {
      const all = this.items;
      this.items = [];
      return all;
    }
    return [this.items.shift()!];
  }

  /** Puts messages back at the head, in order: a checkpoint that could not use them loses nothing. */
  unshift(items: QueuedMessage[]): void {
    this.items.unshift(...items);
  }

  peek(): readonly QueuedMessage[] {
    return this.items;
  }

  get size(): number {
    return this.items.length;
  }

  clear(): void {
    this.items = [];
  }
}

/** Anything the loop can read queued messages from: a MessageQueue or a plain function. */
export type MessageSource = MessageQueue | (() => AgentMessage[]);

export function takeFrom(source: MessageSource | undefined): QueuedMessage[] {
  if (!source) return [];
  if (source instanceof MessageQueue) return source.take();
  return source().map((message) => ({ message }));
}

export function sizeOf(source: MessageSource | undefined): number {
  if (!source) return 0;
  return source instanceof MessageQueue ? source.size : 0;
}
