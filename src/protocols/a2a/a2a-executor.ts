import type { Message } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { BasicAgent } from '../../agent/basic-agent.js';
import type { PendingApproval } from '../../agent/run-controls.js';
import type { ApprovalDecision } from '../../operators/request-approval.js';
import type { AgentEndEvent } from '../../types/events.js';
import { dataOfParts, PHI_RX_KEY, TASK_STATE, textOfParts, textPart } from './a2a-parts.js';
import type { ContextAgents } from './context-agents.js';
import { TaskRun } from './task-run.js';
import { endUpdates, status, toA2aUpdates } from './to-a2a.js';

interface LiveTask {
  readonly run: TaskRun;
  readonly agent: BasicAgent;
}

/**
 * The SDK's `AgentExecutor` for phi-rx: each message starts a run of its context's BasicAgent (see
 * {@link ContextAgents}) and publishes the run's events as task updates; a reply to a task that
 * waits for input answers its approval; CancelTask aborts the run (tools and sockets included), which
 * ends the task `canceled`. The conversation is saved to the store when a run waits for approval
 * and when it ends, before the final update goes out.
 */
export class A2aExecutor implements AgentExecutor {
  private readonly live = new Map<string, LiveTask>();

  constructor(
    private readonly agents: ContextAgents,
    private readonly newId: () => string,
    /** Text deltas within this many ms go out as one status update (0: one update per delta). */
    private readonly textChunkMs = 100,
  ) {}

  /** The task's run while it is served by this executor. */
  runOf(taskId: string): TaskRun | undefined {
    return this.live.get(taskId)?.run;
  }

  /** Aborts every run still going (the server closes). */
  abortAll(): void {
    for (const { run, agent } of this.live.values()) {
      run.cancelRequested = true;
      agent.abort('the A2A server closed');
    }
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const message = request.userMessage;
    const known = this.live.get(request.taskId);
    if (known) return this.answer(known, message, bus);
    const ids = { taskId: request.taskId, contextId: request.contextId, newId: this.newId };
    const run = new TaskRun(ids, message, bus);
    run.announce();
    const refuse = (state: typeof TASK_STATE.failed | typeof TASK_STATE.rejected, text: string): void =>
      run.publish(run.nextEventId(), [status(ids, state, [textPart(text)], {})]);
    if (request.task) {
      return refuse(TASK_STATE.failed, `Task ${request.taskId} is no longer running on this server (it was restarted or the task ended); send a new message in context ${request.contextId} to go on with the conversation.`);
    }
    const prompt = textOfParts(message.parts, true).trim();
    if (prompt === '') return refuse(TASK_STATE.rejected, 'The message has no text or data part: there is nothing to ask the agent.');
    let agent: BasicAgent;
    try {
      agent = await this.agents.get(request.contextId);
    } catch (e) {
      return refuse(TASK_STATE.failed, `The conversation of context ${request.contextId} could not be loaded: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (agent.isStreaming) return refuse(TASK_STATE.rejected, `Context ${request.contextId} is busy with another task; send the message when it has ended.`);
    this.live.set(request.taskId, { run, agent });
    this.start(run, agent, prompt);
    return run.untilPause();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const task = this.live.get(taskId);
    if (!task) return;
    task.run.cancelRequested = true;
    task.agent.abort('cancelled by the A2A client (CancelTask)');
    void bus; // the run's own bus is this one: the `canceled` update goes out on it when the run has ended
  };

  private start(run: TaskRun, agent: BasicAgent, prompt: string): void {
    let rootLoop: string | undefined;
    let end: { event: AgentEndEvent; id: number } | undefined;
    const text = new TextChunks(run, this.textChunkMs);
    agent.prompt(prompt).subscribe({
      next: (event) => {
        const id = run.nextEventId();
        if (event.type === 'AgentStart') rootLoop ??= event.loopId;
        if (event.type === 'AgentEnd' && event.loopId === rootLoop) {
          end = { event, id };
          return text.flush();
        }
        if (event.type === 'MessageUpdate' && event.delta.type === 'text') return text.add(id, event.delta.delta);
        const updates = toA2aUpdates(event, id, run.ids);
        if (updates.length === 0) return;
        text.flush();
        run.publish(id, updates);
        if (event.type === 'ToolApprovalRequested') void this.agents.save(agent).catch(() => undefined);
      },
      error: (error: unknown) => {
        text.flush();
        void this.finish(run, agent, undefined, error);
      },
      complete: () => {
        text.flush();
        void this.finish(run, agent, end, undefined);
      },
    });
  }

  /** Saves the conversation, then sends how the run ended. */
  private async finish(run: TaskRun, agent: BasicAgent, end: { event: AgentEndEvent; id: number } | undefined, error: unknown): Promise<void> {
    let saveError: unknown;
    try {
      await this.agents.save(agent);
    } catch (e) {
      saveError = e;
    }
    const ids = run.ids;
    const id = end?.id ?? run.nextEventId();
    if (error !== undefined || !end) {
      const text = error instanceof Error ? error.message : error !== undefined ? String(error) : 'The run ended without an AgentEnd.';
      run.publish(id, [status(ids, run.cancelRequested ? TASK_STATE.canceled : TASK_STATE.failed, [textPart(text)], {})]);
    } else {
      const updates = endUpdates(end.event, id, ids);
      if (saveError !== undefined && end.event.stopReason !== 'aborted') {
        // The answer stands, but the conversation is not kept: say so instead of completing.
        updates.splice(updates.length - 1, 1, status(ids, TASK_STATE.failed, [textPart(`The conversation could not be saved to the session store: ${saveError instanceof Error ? saveError.message : String(saveError)}`)], {}));
      }
      run.publish(id, updates);
    }
    this.live.delete(ids.taskId);
  }

  /** A reply to a task waiting for input: the answer to its (oldest, or named) approval. (Messages to a task at work are refused before they get here: see a2aServer.) */
  private answer(task: LiveTask, message: Message, bus: ExecutionEventBus): Promise<void> {
    const { run, agent } = task;
    run.attach(bus, message);
    const pending = agent.pendingApprovals();
    const answer = readApproval(message, pending);
    if (typeof answer === 'string') {
      run.publish(run.nextEventId(), [status(run.ids, TASK_STATE.inputRequired, [textPart(answer)], {})]);
      return Promise.resolve();
    }
    run.publish(run.nextEventId(), [status(run.ids, TASK_STATE.working, [textPart(`Answer received for ${answer.toolCallId}.`)], {})]);
    try {
      agent.approve(answer.toolCallId, answer.decision);
    } catch (e) {
      run.publish(run.nextEventId(), [status(run.ids, TASK_STATE.inputRequired, [textPart(e instanceof Error ? e.message : String(e))], {})]);
      return Promise.resolve();
    }
    const next = agent.pendingApprovals()[0];
    if (next && !run.ended) {
      const id = run.nextEventId();
      run.publish(id, toA2aUpdates({ type: 'ToolApprovalRequested', loopId: next.loopId, toolCallId: next.toolCallId, toolName: next.toolName, args: next.args, timestamp: next.requestedAt }, id, run.ids));
    }
    return run.untilPause();
  }
}

/**
 * Consecutive text deltas as one status update per `ms` (the SDK's task store copies the whole task
 * on every update, history included: one update per delta costs time quadratic in the answer's
 * length). The update carries the id of its last delta; `ms` 0 sends each delta at once.
 */
class TextChunks {
  private text = '';
  private lastId = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly run: TaskRun,
    private readonly ms: number,
  ) {}

  add(id: number, delta: string): void {
    if (delta === '') return;
    this.text += delta;
    this.lastId = id;
    if (this.ms <= 0) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), this.ms);
  }

  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.text === '') return;
    const { text, lastId } = this;
    this.text = '';
    this.run.publish(lastId, [status(this.run.ids, TASK_STATE.working, [textPart(text)], { [PHI_RX_KEY]: { eventId: lastId, type: 'MessageUpdate' } })]);
  }
}

const YES = /^(yes|y|ok|approve|approved|allow)\b/i;
const NO = /^(no|n|deny|denied|reject|refuse)\b[\s:,.-]*([\s\S]*)$/i;

/**
 * Reads an approval out of a reply: a data part `{ approved: boolean, reason?, args?, toolCallId? }`,
 * or text starting with yes / approve or no / deny (the rest of the text is the reason). The call is
 * the one named, else the oldest waiting. A reply that says neither is answered with what to send.
 */
export function readApproval(message: Message, pending: readonly PendingApproval[]): { toolCallId: string; decision: ApprovalDecision } | string {
  if (pending.length === 0) return 'Nothing is waiting for approval in this task.';
  const data = dataOfParts(message.parts).find((d): d is Record<string, unknown> => typeof d === 'object' && d !== null && 'approved' in d);
  if (data) {
    const { approved, reason, args, toolCallId } = data;
    if (typeof approved !== 'boolean') return `The answer's "approved" must be true or false, got ${JSON.stringify(approved)}.`;
    if (toolCallId !== undefined && (typeof toolCallId !== 'string' || !pending.some((p) => p.toolCallId === toolCallId))) {
      return `No call ${JSON.stringify(toolCallId)} is waiting for approval; waiting: ${pending.map((p) => p.toolCallId).join(', ')}.`;
    }
    if (reason !== undefined && typeof reason !== 'string') return 'The answer\'s "reason" must be a string.';
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return 'The answer\'s "args" must be an object.';
    const decision: ApprovalDecision = { approved, ...(reason ? { reason } : {}), ...(args ? { args: args as Record<string, unknown> } : {}) };
    return { toolCallId: (toolCallId as string | undefined) ?? pending[0]!.toolCallId, decision };
  }
  const text = textOfParts(message.parts).trim();
  if (YES.test(text)) return { toolCallId: pending[0]!.toolCallId, decision: { approved: true } };
  const no = NO.exec(text);
  if (no) return { toolCallId: pending[0]!.toolCallId, decision: { approved: false, ...(no[2]!.trim() ? { reason: no[2]!.trim() } : {}) } };
  return `Could not read an answer from ${JSON.stringify(text.slice(0, 80))}: answer "yes", or "no: <reason>", or send a data part { "approved": true | false, "reason"?: string } for ${pending[0]!.toolName} (${pending[0]!.toolCallId}).`;
}
