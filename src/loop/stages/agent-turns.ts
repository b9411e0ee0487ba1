import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentEvent, HandoffEvent } from '../../types/events.js';
import type { AgentMessage } from '../../types/message.js';
import { toolCallsOf } from '../../types/message.js';
import { AgentError, errorMessage } from '../../types/errors.js';
import { type DirectStage, directStage, type LoopStage, type LoopState, runStage, type StageSink } from '../kernel/loop-state.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { stateWith } from '../kernel/state-with.js';
import { turnDue } from '../kernel/when-turn-due.js';
import type { TeamMember } from '../handoff-team.js';

/** Which agent of a run's team has the conversation (one per run, kept by {@link activeAgents}). */
export interface ActiveAgent {
  name: string;
}

/** The active agent of each run: at first the one the run was started with (`context.agent`), else `root`. */
export function activeAgents(root: string): (state: LoopState) => ActiveAgent {
  return keptPerRun((state): ActiveAgent => ({ name: state.run?.agent ?? root }));
}

export interface AgentTurnsOptions {
  /** The run's agents by name (`handoffTeam`). */
  team: ReadonlyMap<string, TeamMember>;
  /** Where each run's active agent is kept (shared with the stages that name it). */
  active: (state: LoopState) => ActiveAgent;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Handoffs as a stage: each turn is the active agent's (`turns`: one composition of the loop's
 * stages per agent, with its system prompt, tools, model and settings), and when the turn's tool
 * results hold a successful call of one of that agent's handoff tools, the agent it names takes the
 * conversation: a `Handoff` event (from, to, the call's arguments), the handoff's `inputFilter`
 * applied to the working context, and the next turns are the new agent's. The first handoff of a
 * turn counts. A starting agent (`context.agent`) the team does not know fails the run with
 * `AgentError('InvalidConfig')`; an `inputFilter` that throws or returns no array is a `HookError`
 * and ends the run (`error`): the next agent never sees what the filter was to keep from it.
 *
 * ```
 * source:   --s--------|            (the active agent: triage)
 * agentTurns({ team, active })       (triage's turn calls transfer_to_billing: events t, state s1)
 * output:   --(tHs1)---|            (H: Handoff triage → billing; the next turn is billing's)
 * ```
 *
 * @example
 * const active = activeAgents('triage');
 * const turn = agentTurns(new Map([['triage', triageTurn], ['billing', billingTurn]]), { team, active });
 */
export function agentTurns(turns: ReadonlyMap<string, LoopStage>, options: AgentTurnsOptions): DirectStage {
  const { team, active } = options;
  const scheduler = options.scheduler ?? asyncScheduler;
  return directStage((state, sink) => {
    let member: TeamMember;
    try {
      member = memberOf(team, active(state).name);
    } catch (error) {
      return sink.error(error);
    }
    const done = (left: LoopState): void => {
      // No turn ran (nothing was due): the tool results are the last turn's, its handoff taken already.
      const outputs = left.toolResults === state.toolResults ? [left] : handedOff(left, member, active(left), scheduler.now());
      for (let i = 0; i < outputs.length - 1; i++) sink.event(outputs[i] as AgentEvent);
      sink.done(outputs[outputs.length - 1] as LoopState);
    };
    return runStage(turns.get(member.name)!, state, { ...sink, done });
  });
}

/** The events and the state after an agent's turn: with a handoff, the event and the new agent's context. */
function handedOff(state: LoopState, member: TeamMember, active: ActiveAgent, timestamp: number): readonly (AgentEvent | LoopState)[] {
  const results = state.toolResults;
  if (!results || !state.assistant || member.handoffs.size === 0) return [state];
  for (const result of results) {
    const handoff = result.isError ? undefined : member.handoffs.get(result.toolName);
    if (!handoff) continue;
    const call = toolCallsOf(state.assistant).find((c) => c.id === result.toolCallId);
    const args = call?.arguments ?? {};
    active.name = handoff.to;
    const event: HandoffEvent = {
      type: 'Handoff', loopId: state.loopId, turnIndex: state.turnIndex, from: member.name, to: handoff.to,
      toolCallId: result.toolCallId, toolName: result.toolName, arguments: args, timestamp,
    };
    if (!handoff.inputFilter) return [event, state];
    let kept: unknown;
    try {
      kept = handoff.inputFilter({ from: member.name, to: handoff.to, arguments: args, messages: state.messages });
      if (!Array.isArray(kept)) throw new TypeError(`expected an array of messages, got ${kept === null ? 'null' : typeof kept}`);
      if (!turnDue(stateWith(state, { messages: kept as AgentMessage[], pending: [] }))) {
        throw new TypeError('the messages it keeps must end with one the next agent answers (a user message or a tool result), not the model\'s answer');
      }
    } catch (error) {
      const hookError: AgentEvent = {
        type: 'HookError', loopId: state.loopId, hook: 'handoff.inputFilter', timestamp,
        message: `inputFilter of the handoff ${member.name} → ${handoff.to} failed, the run ends: ${errorMessage(error)}`,
      };
      return [event, hookError, stateWith(state, { ended: 'error' })];
    }
    return [event, stateWith(state, { messages: (kept as readonly AgentMessage[]).slice() })];
  }
  return [state];
}

function memberOf(team: ReadonlyMap<string, TeamMember>, name: string): TeamMember {
  const member = team.get(name);
  if (member) return member;
  throw new AgentError('InvalidConfig', `context.agent: no agent "${name}" in this run's handoffs (agents: ${[...team.keys()].join(', ')})`);
}

/**
 * Runs `stage` (the whole run) with `AgentStart` and `AgentEnd` of its loop naming the active
 * agent (`agent`): the one the run started with, and the one that answered last.
 */
export function namingAgents(stage: LoopStage, active: (state: LoopState) => ActiveAgent): DirectStage {
  return directStage((state, sink) => {
    const named: StageSink = {
      ...sink,
      event: (e) => sink.event((e.type === 'AgentStart' || e.type === 'AgentEnd') && e.loopId === state.loopId ? { ...e, agent: active(state).name } : e),
    };
    return runStage(stage, state, named);
  });
}

/** Each agent's stage run on the active agent's (`answerOpenCalls` of a resumed run: the calls are that agent's). */
export function byActiveAgent(stages: ReadonlyMap<string, LoopStage>, active: (state: LoopState) => ActiveAgent): DirectStage {
  return directStage((state, sink) => {
    const stage = stages.get(active(state).name);
    if (!stage) return sink.error(new AgentError('InvalidConfig', `context.agent: no agent "${active(state).name}" in this run's handoffs (agents: ${[...stages.keys()].join(', ')})`));
    return runStage(stage, state, sink);
  });
}
