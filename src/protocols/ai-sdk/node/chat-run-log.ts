import { type Observable, Subject, type Subscription } from 'rxjs';
import type { AgentEvent } from '../../../types/events.js';
import { uiMessageChunks } from '../to-ui-message-chunks.js';
import type { UIMessageChunk } from '../ui-message-chunk.js';

/** What a chat's run can be asked besides its events: answers to approvals, a stop. */
export interface ChatRunControls {
  /** May throw (an id that is not waiting): the client gets 409 with the message. */
  approve?(toolCallId: string, decision: { approved: boolean; reason?: string }): void;
  abort?(): void;
}

/** One response's share of a run: chunks `start` .. `end` (open while `end` is undefined). */
export interface Segment {
  readonly start: number;
  end?: number;
}

/**
 * One chat's run as UI message chunks, kept for the responses that read it: the first POST's,
 * a resuming GET's (the whole message so far, then live), and, after the run stopped to wait for
 * approvals, the POST that answers them (the chunks from there on). A response is a segment: it
 * ends when the run ends or, while the run waits for the page to answer approvals, when it asked
 * for them (the page answers with a new request). Holds at most `maxChunks` chunks: a run that
 * would need more is stopped with an `error` chunk saying so.
 */
export class ChatRunLog {
  readonly chunks: UIMessageChunk[] = [];
  readonly segments: Segment[] = [{ start: 0 }];
  /** Tool calls asked for approval and not answered yet. */
  readonly waiting = new Set<string>();
  private readonly appended = new Subject<void>();
  private readonly subscription: Subscription;
  private ended = false;
  private check: ReturnType<typeof setTimeout> | undefined;

  constructor(
    events$: Observable<AgentEvent>,
    readonly messageId: string,
    readonly controls: ChatRunControls,
    private readonly maxChunks: number,
  ) {
    this.subscription = events$.pipe(uiMessageChunks({ messageId })).subscribe({
      next: (chunk) => this.append(chunk),
      complete: () => this.finish(),
    });
  }

  get isOver(): boolean {
    return this.ended;
  }

  /** The segment a response is writing now, if one is open. */
  get openSegment(): Segment | undefined {
    const last = this.segments[this.segments.length - 1]!;
    return last.end === undefined && !this.ended ? last : undefined;
  }

  /**
   * Opens the segment of the request answering approvals (call before answering them: what they
   * cause is its), from where the last one ended: what came meanwhile (another tool's output) too.
   */
  openNext(): Segment {
    const segment = { start: this.segments[this.segments.length - 1]!.end ?? this.chunks.length };
    this.segments.push(segment);
    return segment;
  }

  /** Calls `listener` after each chunk and when a segment or the run ends; returns what stops it. */
  onChange(listener: () => void): () => void {
    const subscription = this.appended.subscribe({ next: listener, complete: listener });
    return () => subscription.unsubscribe();
  }

  /** Stops the run (unsubscribes from it). */
  dispose(): void {
    this.subscription?.unsubscribe();
    this.finish();
  }

  private append(chunk: UIMessageChunk): void {
    if (this.ended) return;
    if (this.chunks.length >= this.maxChunks) {
      this.chunks.push({ type: 'error', errorText: `the reply is over ${this.maxChunks} chunks (maxChunks); the run was stopped` });
      this.dispose();
      return;
    }
    this.chunks.push(chunk);
    if (chunk.type === 'tool-approval-request') this.waiting.add(chunk.toolCallId);
    else if (chunk.type === 'data-phi-tool-approval-resolved') this.waiting.delete((chunk.data as { toolCallId: string }).toolCallId);
    if (this.waiting.size > 0) this.endSegmentSoon();
    this.appended.next();
  }

  /** The run waits for the page: the response ends once the approvals asked at once are all in it. */
  private endSegmentSoon(): void {
    if (this.check) return;
    this.check = setTimeout(() => {
      this.check = undefined;
      const segment = this.openSegment;
      if (segment && this.waiting.size > 0) {
        segment.end = this.chunks.length;
        this.appended.next();
      }
    }, 0);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.check);
    const last = this.segments[this.segments.length - 1]!;
    last.end ??= this.chunks.length;
    this.appended.complete();
  }
}
