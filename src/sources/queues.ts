import { Observable } from 'rxjs';
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
  /** Who is told of each message pushed (made on first use: most queues are never watched). */
  private listeners: Set<(item: QueuedMessage) => void> | undefined;
  /** Each message pushed, as it is pushed (hot). */
  readonly added$: Observable<QueuedMessage> = new Observable<QueuedMessage>((subscriber) => this.watchAdded((item) => subscriber.next(item)));

  constructor(public mode: QueueMode = 'oneAtATime') {}

  push(message: AgentMessage, policy?: SteeringPolicy): void {
    const item: QueuedMessage = policy === undefined ? { message } : { message, policy };
    this.items.push(item);
    // Those watching when it was pushed are told, as a Subject's subscribers would be.
    if (this.listeners !== undefined && this.listeners.size > 0) for (const listener of [...this.listeners]) listener(item);
  }

  /**
   * `added$` as a plain callback registration: `listener` is called with each message pushed from
   * now on; the returned function stops it. (What a tool call's steering watch uses: no
   * subscription per call.)
   */
  watchAdded(listener: (item: QueuedMessage) => void): () => void {
    const listeners = (this.listeners ??= new Set());
    const own = (item: QueuedMessage): void => listener(item); // its own entry, even for a listener registered twice
    listeners.add(own);
    return () => {
      listeners.delete(own);
    };
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
