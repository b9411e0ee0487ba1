import { asyncScheduler, EMPTY, type Observable } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AgentMessage } from '../types/message.js';
import { AgentBuilder } from './agent-builder.js';
import { type ApprovalDecision, type PendingApproval, RunControls } from './run-controls.js';
import { agentSession, type RestoredAgentState, restoredAgentState, type Session, SessionRecorder, type SessionStore } from './agent-session.js';

/**
 * The control half of {@link BasicAgent}: answering calls that wait for approval, cancelling one
 * call, and saving / restoring the agent's session with what is still waiting. BasicAgent adds
 * the runs these act on.
 */
export abstract class AgentControls extends AgentBuilder {
  protected readonly controls = new RunControls();
  /** The agent's session as recorded from its events, for `save()`. */
  protected recorder = new SessionRecorder();
  /** The conversation the current session's first run started from (see `runStarts`). */
  private history: { readonly sessionId: string; readonly messages: readonly AgentMessage[] } | undefined;

  abstract readonly agentId: string;
  abstract get sessionId(): string;
  abstract get isStreaming(): boolean;
  abstract continue(): Observable<AgentEvent>;
  protected abstract adoptRestored(state: RestoredAgentState, sessionId: string): void;

  /** Calls waiting for approval (also those a restored session left waiting), oldest first. */
  pendingApprovals(): PendingApproval[] {
    return this.controls.list();
  }

  /** Forgets waiting approvals and the recorded session (`reset()`). */
  protected forgetControls(): void {
    this.controls.adopt([]);
    this.recorder = new SessionRecorder();
    this.history = undefined;
  }

  /**
   * A run starts with `conversation`: the first run of a session notes it as the session's history
   * (what `save` stores before the loops, so that messages the agent had before the session —
   * `restoreMessages`, an earlier session — are not lost).
   */
  protected runStarts(conversation: readonly AgentMessage[]): void {
    if (!this.sessionHasRuns()) this.history = { sessionId: this.sessionId, messages: conversation.slice() };
  }

  /** Whether the current session has had a run (here, or before it was restored). */
  protected sessionHasRuns(): boolean {
    return this.history?.sessionId === this.sessionId;
  }

  /**
   * Answers a call waiting for approval: `{ approved: true }` runs it (with `args` instead, when
   * given: validated like the model's), `{ approved: false, reason }` ends it with an error result
   * carrying the reason, which the model reads. During a run the answer goes to it and EMPTY is
   * returned. For a call a restored session left waiting, the run resumes now (the approved call
   * runs or the denial is recorded, the other open calls of that message are answered, then the
   * model's next turn) and its events are returned: hot, replayed to a late subscriber.
   * An id that is not waiting throws AgentError('UnknownToolCall'); a malformed answer, ('InvalidApproval').
   */
  approve(toolCallId: string, decision: ApprovalDecision): Observable<AgentEvent> {
    if (this.controls.approve(toolCallId, decision, this.isStreaming) === 'active') return EMPTY;
    const resumed$ = this.continue();
    resumed$.subscribe({ error: () => undefined }); // it runs now; subscribers of resumed$ get its events and any error
    return resumed$;
  }

  /**
   * Cancels one call of the active run while the run goes on: a running tool's AbortSignal fires
   * (a child process is killed, an HTTP request closed), a call waiting for approval or not yet
   * started ends at once; either way its result is the error "Tool call cancelled: <reason>".
   * Returns false, doing nothing, for a call that has already finished; throws
   * AgentError('UnknownToolCall') for an id the active run never had, or when no run is active.
   */
  cancelToolCall(toolCallId: string, reason?: string): boolean {
    return this.controls.cancel(toolCallId, reason, this.isStreaming);
  }

  /**
   * Cancels one branch of the active `promptParallel` run (by config index or loop id) while the
   * others go on: it ends `aborted`, and the evaluation sees it failed and `cancelled`, so it cannot
   * win. Returns false, doing nothing, for a branch that has already ended; throws
   * AgentError('UnknownBranch') for a key that names no branch, or when no parallel run is active.
   */
  cancelBranch(loopIdOrIndex: string | number, reason?: string): boolean {
    return this.controls.cancelBranch(loopIdOrIndex, reason, this.isStreaming);
  }

  /**
   * Saves the agent's session to `store`: every loop with its events, a run that is still going
   * (waiting for approval, say) as far as it got. `restore` in another process picks it up.
   */
  async save(store: SessionStore): Promise<Session> {
    const history = this.history?.sessionId === this.sessionId ? this.history.messages : [];
    const session = agentSession(this.recorder, this.sessionId, this.agentId, (this.options.scheduler ?? asyncScheduler).now(), history);
    await store.save(session);
    return session;
  }

  /**
   * Takes on a saved session: its id, conversation (an unfinished run's messages as far as it got),
   * loop ids and the calls still waiting for approval (`pendingApprovals()`; `approve()` resumes
   * the run). Construct the agent with the same tools and approval options as the one that saved.
   * Fails with AgentError('AlreadyRunning') during a run and with the store's errors
   * (SessionNotFoundError, SessionCorruptError) for a session it cannot load.
   */
  async restore(store: SessionStore, sessionId: string): Promise<void> {
    const state = restoredAgentState(await store.load(sessionId));
    this.adoptRestored(state, sessionId);
    this.recorder = state.recorder;
    this.history = { sessionId, messages: state.history };
    this.controls.adopt(state.pending);
  }
}
