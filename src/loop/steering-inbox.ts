import { NEVER, type Observable } from 'rxjs';
import type { SteeringPolicy } from '../types/config.js';
import { MessageQueue, type MessageSource, type QueuedMessage } from '../sources/queues.js';
import type { RunSteering } from './kernel/loop-state.js';
import type { AgentMessage } from '../types/message.js';

const POLICY_STRENGTH: Record<SteeringPolicy, number> = { wait: 0, skip: 1, interrupt: 2 };

/**
 * A run's steering source, as its checkpoints read it: whether anything is queued, which policy is
 * in force, and taking what is queued. A function source is asked once per look; what it handed
 * over waits in a buffer until taken.
 */
export class SteeringInbox implements RunSteering {
  private readonly buffer: QueuedMessage[] = [];
  /** Fires when a steering message arrives (a queue's additions; a function source never fires). */
  readonly arrivals$: Observable<unknown>;

  constructor(
    private readonly source: MessageSource | undefined,
    private readonly defaultPolicy: SteeringPolicy = 'skip',
  ) {
    this.arrivals$ = source instanceof MessageQueue ? source.added$ : NEVER;
  }

  /** Is a steering message waiting? */
  pending(): boolean {
    const source = this.source;
    if (!source) return this.buffer.length > 0;
    if (source instanceof MessageQueue) return source.size > 0 || this.buffer.length > 0;
    this.buffer.push(...source().map((message) => ({ message })));
    return this.buffer.length > 0;
  }

  /** How many messages wait in a queue source (a function source: 0, it cannot be asked without taking). */
  size(): number {
    return queuedSize(this.source);
  }

  /** The strongest policy any queued message asks for; the agent's policy when none asks. */
  policy(): SteeringPolicy {
    const source = this.source;
    const waiting = source instanceof MessageQueue ? source.peek() : [];
    const queued = this.buffer.length === 0 ? waiting : [...this.buffer, ...waiting];
    let explicit: SteeringPolicy | undefined;
    for (const q of queued) if (q.policy && (!explicit || POLICY_STRENGTH[q.policy] > POLICY_STRENGTH[explicit])) explicit = q.policy;
    return explicit ?? this.defaultPolicy;
  }

  /** The messages of everything queued now (the buffer first). */
  take(): readonly AgentMessage[] {
    const queued = takeQueued(this.source);
    const taken = this.buffer.length === 0 ? queued : [...this.buffer.splice(0), ...queued];
    return taken.length === 0 ? NONE : taken.map((q) => q.message);
  }
}

const NONE: readonly AgentMessage[] = [];

/** How many messages a queue holds (a function source: 0, it cannot be asked without taking). */
export function queuedSize(source: MessageSource | undefined): number {
  return source instanceof MessageQueue ? source.size : 0;
}

/** Takes what a source has queued now. */
export function takeQueued(source: MessageSource | undefined): QueuedMessage[] {
  if (!source) return [];
  if (source instanceof MessageQueue) return source.take();
  return source().map((message) => ({ message }));
}
