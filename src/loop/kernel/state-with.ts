import type { AgentMessage } from '../../types/message.js';
import type { LoopState, LoopStateDraft } from './loop-state.js';

/**
 * A copy of `state` with `changes` applied: the new value a stage hands on (the state given is
 * not changed). What every built-in stage uses instead of `{ ...state, field }`, and what your
 * stages can use too: V8 copies an object made by a spread of another spread field by field on
 * its slow path (≈15 ns a field; a state has 22), while this copy is one constructor call
 * (≈25 ns in all). A state that carries fields of your own is copied with a spread, so that none
 * is lost.
 *
 * @example
 * const noteTurn = loopStage((state) => stateWith(state, { pending: [...state.pending, userMessage(`turn ${state.turnIndex}`)] }));
 */
export function stateWith(state: LoopState, changes: Partial<Omit<LoopState, 'type'>>): LoopState {
  const next = copyState(state) as Record<string, unknown>;
  for (const key in changes) next[key] = (changes as Record<string, unknown>)[key];
  return next as unknown as LoopState;
}

/**
 * A copy of `state` that the caller owns and may set fields on before handing it on (a stage that
 * changes several fields, or appends messages with `recordInto`, makes one copy, not one per field).
 */
export function copyState(state: LoopState): LoopStateDraft {
  return state instanceof StateRecord || hasOnlyStateFields(state) ? new StateRecord(state) : { ...state };
}

/** The fields of `LoopState`, in the order `loopState()` sets them. */
const FIELDS = new Set([
  'type', 'loopId', 'messages', 'pending', 'turnIndex', 'ended', 'request', 'partial', 'assistant', 'failure', 'toolResults',
  'stopRequested', 'newMessages', 'sinceRequest', 'usage', 'lastStopReason', 'rejection', 'steeredAt', 'overflowRecovered',
  'startedAt', 'output', 'stoppedBy', 'run',
]);

function hasOnlyStateFields(state: LoopState): boolean {
  for (const key in state) if (!FIELDS.has(key)) return false;
  return true;
}

/** A state as the built-in stages make it: every field of `LoopState`, always in one order (one hidden class). */
export class StateRecord implements LoopStateDraft {
  declare type: 'LoopState';
  declare loopId: string;
  declare messages: readonly AgentMessage[];
  declare pending: readonly AgentMessage[];
  declare turnIndex: number;
  declare ended: LoopState['ended'];
  declare request: LoopState['request'];
  declare partial: LoopState['partial'];
  declare assistant: LoopState['assistant'];
  declare failure: LoopState['failure'];
  declare toolResults: LoopState['toolResults'];
  declare stopRequested: LoopState['stopRequested'];
  declare newMessages: LoopState['newMessages'];
  declare sinceRequest: LoopState['sinceRequest'];
  declare usage: LoopState['usage'];
  declare lastStopReason: LoopState['lastStopReason'];
  declare rejection: LoopState['rejection'];
  declare steeredAt: LoopState['steeredAt'];
  declare overflowRecovered: LoopState['overflowRecovered'];
  declare startedAt: LoopState['startedAt'];
  declare output: LoopState['output'];
  declare stoppedBy: LoopState['stoppedBy'];
  declare run: LoopState['run'];

  constructor(s: Omit<LoopState, 'type'>) {
    this.type = 'LoopState';
    this.loopId = s.loopId;
    this.messages = s.messages;
    this.pending = s.pending;
    this.turnIndex = s.turnIndex;
    this.ended = s.ended;
    this.request = s.request;
    this.partial = s.partial;
    this.assistant = s.assistant;
    this.failure = s.failure;
    this.toolResults = s.toolResults;
    this.stopRequested = s.stopRequested;
    this.newMessages = s.newMessages;
    this.sinceRequest = s.sinceRequest;
    this.usage = s.usage;
    this.lastStopReason = s.lastStopReason;
    this.rejection = s.rejection;
    this.steeredAt = s.steeredAt;
    this.overflowRecovered = s.overflowRecovered;
    this.startedAt = s.startedAt;
    this.output = s.output;
    this.stoppedBy = s.stoppedBy;
    this.run = s.run;
  }
}
