import type { AgentEvent, EventOf, ToolApprovalRequestedEvent } from '../../types/events.js';
import type { AgentMessage, AssistantMessage } from '../../types/message.js';
import type { AssistantContent } from '../../types/content.js';
import type { Usage } from '../../types/usage.js';
import { errorMessage } from '../../types/errors.js';
import type { AgUiEvent, AgUiInterrupt, AgUiMessage, AgUiRunOutcome } from './ag-ui-event.js';
import { toAgUiMessages } from './to-ag-ui-messages.js';
import { jsonPatch } from './json-patch.js';
import type { AgUiEventsOptions } from './to-ag-ui.js';

/** The assistant message being streamed: its AG-UI id, the blocks begun, the one open now. */
interface Streaming {
  id: string;
  message: AssistantMessage | undefined;
  begun: Set<number>;
  open: { index: number; entityId: string } | undefined;
  reasonings: number;
}

/**
 * The state machine behind `agUiEvents()`: reads a run's events one at a time and emits AG-UI
 * events through `emit`. Keeps ids, counters and the completed messages (when the history is
 * known), never a copy of growing text.
 */
export class AgUiMapper {
  private loopId: string | undefined;
  private threadId = '';
  private runId = '';
  private started = false;
  ended = false;
  private step: string | undefined;
  private streaming: Streaming | undefined;
  private ids = 0;
  private readonly history: AgUiMessage[] | undefined;
  private readonly clientTools: ReadonlySet<string>;
  /** Tool calls running on the server, client tool calls left open, calls waiting for approval. */
  private readonly running = new Set<string>();
  private readonly clientCalls: string[] = [];
  private readonly approvals = new Map<string, ToolApprovalRequestedEvent>();
  /** The state the client has (what the last STATE_* made it), and whether it has one. */
  private shownState: unknown;
  private stateShown = false;
  private pendingState: { value: unknown } | undefined;

  constructor(private readonly options: AgUiEventsOptions, private readonly emit: (event: AgUiEvent) => void) {
    this.history = options.messages ? [...options.messages] : undefined;
    this.clientTools = new Set(options.clientTools ?? []);
  }

  /** True when the run can only wait for the client: nothing runs, a call waits for approval or for the client. */
  get waitsForClient(): boolean {
    return !this.ended && this.running.size === 0 && (this.approvals.size > 0 || this.clientCalls.length > 0);
  }

  next(e: AgentEvent): void {
    if (this.ended) return;
    if (e.type === 'AgentStart' && this.loopId === undefined) return this.runStarted(e);
    if (!this.started) this.runStarted(undefined);
    if ('loopId' in e && e.loopId !== this.loopId) return this.custom(e);
    switch (e.type) {
      case 'TurnStart':
        return this.stepStarted(`turn ${e.turnIndex}`, { turnIndex: e.turnIndex, triggeredBy: e.triggeredBy });
      case 'TurnEnd':
        return this.stepFinished();
      case 'MessageStart':
        if (e.message.role === 'assistant') this.streaming = { id: this.nextId(), message: undefined, begun: new Set(), open: undefined, reasonings: 0 };
        return;
      case 'MessageUpdate':
        return this.update(e);
      case 'MessageReset':
        return this.reset(e);
      case 'MessageEnd':
        return this.messageEnd(e.message);
      case 'AgentEnd':
        return this.agentEnd(e);
      case 'ToolExecutionStart':
        if (this.clientTools.has(e.toolName)) this.clientCalls.push(e.toolCallId);
        else this.running.add(e.toolCallId);
        return this.custom(e);
      case 'ToolExecutionEnd':
        this.running.delete(e.toolCallId);
        return this.custom(e);
      case 'ToolApprovalRequested':
        if (this.options.interruptApprovals) this.approvals.set(e.toolCallId, e);
        return this.custom(e);
      case 'ToolApprovalResolved':
        this.approvals.delete(e.toolCallId);
        return this.custom(e);
      default:
        return this.custom(e);
    }
  }

  /** The source failed: RUN_ERROR (the first event when the run never started). */
  error(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const code = err instanceof Error ? (err as { code?: unknown }).code ?? err.name : undefined;
    this.emit({ type: 'RUN_ERROR', message: errorMessage(err), ...(typeof code === 'string' && { code }) });
  }

  /** The source completed: a run that never reached AgentEnd ends with RUN_ERROR, saying so. */
  complete(): void {
    if (this.ended) return;
    if (!this.started) this.runStarted(undefined);
    this.error(Object.assign(new Error('the run ended before its AgentEnd event'), { code: 'INCOMPLETE_RUN' }));
  }

  /** Ends the AG-UI run while the phi-rx run waits for the client: an interrupt for the approvals, else the client's tool calls as pending. */
  suspend(): void {
    this.closeStreaming();
    this.stepFinished();
    const interrupts = [...this.approvals.values()].map(interruptOf);
    const outcome: AgUiRunOutcome = interrupts.length > 0 ? { type: 'interrupt', interrupts } : { type: 'success', pendingToolCallIds: [...this.clientCalls] };
    this.finish({ type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, outcome });
  }

  // ---- run and steps ---------------------------------------------------------------------------

  private runStarted(e: EventOf<'AgentStart'> | undefined): void {
    this.started = true;
    this.loopId = e?.loopId;
    this.threadId = this.options.threadId ?? e?.sessionId ?? 'thread';
    this.runId = this.options.runId ?? e?.loopId ?? 'run';
    const metadata = e ? { 'phi-rx': { agentId: e.agentId, sessionId: e.sessionId, loopId: e.loopId } } : undefined;
    this.emit({ type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId, ...(e && { timestamp: e.timestamp, metadata }), ...(this.options.input && { input: this.options.input }) });
    if (this.history) this.emit({ type: 'MESSAGES_SNAPSHOT', messages: [...this.history] });
    if (this.options.state !== undefined) this.state(this.options.state);
    if (this.pendingState) this.state(this.pendingState.value);
    this.pendingState = undefined;
  }

  /** A new value of the state the client is shown: STATE_SNAPSHOT the first time, then STATE_DELTA (JSON Patch) when it changed. */
  state(value: unknown): void {
    if (this.ended) return;
    if (!this.started) return void (this.pendingState = { value });
    if (!this.stateShown) this.emit({ type: 'STATE_SNAPSHOT', snapshot: value });
    else {
      const delta = jsonPatch(this.shownState, value);
      if (delta.length > 0) this.emit({ type: 'STATE_DELTA', delta });
    }
    this.shownState = value;
    this.stateShown = true;
  }

  private stepStarted(stepName: string, fields: Record<string, unknown>): void {
    this.stepFinished();
    this.step = stepName;
    this.emit({ type: 'STEP_STARTED', stepName, metadata: { 'phi-rx': fields } });
  }

  private stepFinished(): void {
    if (this.step === undefined) return;
    this.emit({ type: 'STEP_FINISHED', stepName: this.step });
    this.step = undefined;
  }

  private agentEnd(e: EventOf<'AgentEnd'>): void {
    this.closeStreaming();
    this.stepFinished();
    if (e.stopReason === 'error') {
      const failed = [...e.messages].reverse().find((m): m is AssistantMessage => m.role === 'assistant');
      this.snapshot();
      this.ended = true;
      this.emit({ type: 'RUN_ERROR', message: failed?.errorMessage ?? 'the run ended in an error', code: 'PROVIDER_ERROR' });
      return;
    }
    const result = { stopReason: e.stopReason, ...(e.output !== undefined && { output: e.output }), ...(e.outputError && { outputError: e.outputError }), ...(e.rejection && { rejection: e.rejection }) };
    const outcome: AgUiRunOutcome = e.stopReason === 'aborted' ? { type: 'cancelled' } : { type: 'success' };
    this.finish({ type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, result, outcome, usage: [tokenUsage(e.usage)], timestamp: e.timestamp });
  }

  private finish(event: AgUiEvent): void {
    this.snapshot();
    this.ended = true;
    this.emit(event);
  }

  /** The whole conversation, when the history before the run is known: the client re-syncs to it. */
  private snapshot(): void {
    if (this.history) this.emit({ type: 'MESSAGES_SNAPSHOT', messages: [...this.history] });
  }

  // ---- messages --------------------------------------------------------------------------------

  private update(e: EventOf<'MessageUpdate'>): void {
    const s = (this.streaming ??= { id: this.nextId(), message: undefined, begun: new Set(), open: undefined, reasonings: 0 });
    s.message = e.message;
    const index = e.delta.contentIndex;
    if (s.open?.index !== index) {
      this.closeStreaming();
      this.begin(s, index);
    }
    if (e.delta.delta === '') return;
    const entityId = s.open!.entityId;
    if (e.delta.type === 'text') this.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: entityId, delta: e.delta.delta });
    else if (e.delta.type === 'thinking') this.emit({ type: 'REASONING_MESSAGE_CONTENT', messageId: entityId, delta: e.delta.delta });
    else this.emit({ type: 'TOOL_CALL_ARGS', toolCallId: entityId, delta: e.delta.delta });
  }

  /** Opens block `index` of the streaming message. */
  private begin(s: Streaming, index: number): void {
    const block = s.message!.content[index]!;
    s.begun.add(index);
    if (block.type === 'text') {
      s.open = { index, entityId: s.id };
      this.emit({ type: 'TEXT_MESSAGE_START', messageId: s.id, role: 'assistant' });
    } else if (block.type === 'thinking') {
      const id = `${s.id}.r${s.reasonings++}`;
      s.open = { index, entityId: id };
      this.emit({ type: 'REASONING_START', messageId: id });
      this.emit({ type: 'REASONING_MESSAGE_START', messageId: id, role: 'reasoning' });
    } else {
      s.open = { index, entityId: block.id };
      this.emit({ type: 'TOOL_CALL_START', toolCallId: block.id, toolCallName: block.name, parentMessageId: s.id });
    }
  }

  /** Closes the open block: TOOL_CALL_END means the arguments are complete (the result is TOOL_CALL_RESULT). */
  private closeStreaming(): void {
    const s = this.streaming;
    if (!s?.open) return;
    const { index, entityId } = s.open;
    s.open = undefined;
    const block = s.message?.content[index];
    if (block?.type === 'text') this.emit({ type: 'TEXT_MESSAGE_END', messageId: entityId });
    else if (block?.type === 'thinking') {
      this.emit({ type: 'REASONING_MESSAGE_END', messageId: entityId });
      if (block.signature !== undefined) this.emit({ type: 'REASONING_ENCRYPTED_VALUE', subtype: 'message', entityId, encryptedValue: block.signature });
      this.emit({ type: 'REASONING_END', messageId: entityId });
    } else this.emit({ type: 'TOOL_CALL_END', toolCallId: entityId });
  }

  /** Blocks that arrived whole (no deltas: a provider that does not stream, redacted thinking), each opened, filled and closed. */
  private wholeBlocks(s: Streaming, content: readonly AssistantContent[]): void {
    content.forEach((block, index) => {
      if (s.begun.has(index)) return;
      this.begin(s, index);
      const entityId = s.open!.entityId;
      const full = block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : JSON.stringify(block.arguments);
      if (full !== '') {
        if (block.type === 'text') this.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: entityId, delta: full });
        else if (block.type === 'thinking') this.emit({ type: 'REASONING_MESSAGE_CONTENT', messageId: entityId, delta: full });
        else this.emit({ type: 'TOOL_CALL_ARGS', toolCallId: entityId, delta: full });
      }
      this.closeStreaming();
    });
  }

  private reset(e: EventOf<'MessageReset'>): void {
    const s = this.streaming;
    this.closeStreaming();
    this.custom(e, s && { discardedMessageId: s.id });
    this.snapshot();
    const next: Streaming = { id: this.nextId(), message: e.message, begun: new Set(), open: undefined, reasonings: 0 };
    this.streaming = next;
    this.wholeBlocks(next, e.message.content);
  }

  private messageEnd(message: AgentMessage): void {
    if (message.role === 'assistant') {
      const s = (this.streaming ??= { id: this.nextId(), message, begun: new Set(), open: undefined, reasonings: 0 });
      s.message = message;
      this.closeStreaming();
      this.wholeBlocks(s, message.content);
      this.streaming = undefined;
      return this.record(message, s.id);
    }
    const id = this.nextId();
    const [converted] = toAgUiMessages([message], () => id);
    this.history?.push(converted!);
    if (converted!.role === 'tool') {
      this.emit({ type: 'TOOL_CALL_RESULT', messageId: id, toolCallId: converted!.toolCallId, content: converted!.content, role: 'tool', metadata: converted!.metadata });
    } else if (converted!.role === 'user' && typeof converted!.content === 'string') {
      this.emit({ type: 'TEXT_MESSAGE_START', messageId: id, role: 'user', metadata: converted!.metadata });
      if (converted!.content !== '') this.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: converted!.content });
      this.emit({ type: 'TEXT_MESSAGE_END', messageId: id });
    } else if (converted!.role === 'activity') {
      this.emit({ type: 'ACTIVITY_SNAPSHOT', messageId: id, activityType: converted!.activityType, content: converted!.content, replace: true });
    } else this.emit({ type: 'CUSTOM', name: 'phi-rx:message', value: converted });
  }

  private record(message: AgentMessage, id: string): void {
    if (this.history) this.history.push(...toAgUiMessages([message], () => id));
  }

  /** An event AG-UI has no event for, as `CUSTOM` named `phi-rx:{type}` with the event as its value. */
  private custom(e: AgentEvent, extra?: Record<string, unknown>): void {
    this.emit({ type: 'CUSTOM', name: `phi-rx:${e.type}`, value: extra ? { ...e, ...extra } : e, ...('timestamp' in e && { timestamp: e.timestamp }) });
  }

  private nextId(): string {
    return `${this.runId}.${this.ids++}`;
  }
}

function interruptOf(e: ToolApprovalRequestedEvent): AgUiInterrupt {
  return {
    id: e.toolCallId,
    reason: 'tool_approval',
    message: `The call of ${e.toolName} waits for approval`,
    toolCallId: e.toolCallId,
    responseSchema: {
      type: 'object',
      properties: { approved: { type: 'boolean' }, reason: { type: 'string' }, args: { type: 'object' } },
      required: ['approved'],
    },
    metadata: { 'phi-rx': { toolName: e.toolName, args: e.args } },
  };
}

function tokenUsage(u: Usage): { inputTokens: number; outputTokens: number; totalTokens: number; cachedInputTokens: number; cacheWriteInputTokens: number } {
  return { inputTokens: u.input, outputTokens: u.output, totalTokens: u.totalTokens, cachedInputTokens: u.cacheRead, cacheWriteInputTokens: u.cacheWrite };
}
