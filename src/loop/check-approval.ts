import type { AgentLoopConfig } from './config.js';
import type { AnyTool } from '../types/tool.js';
import { AgentError } from '../types/errors.js';
import { kindOf } from './check-prompts.js';

const isObservableLike = (v: unknown): boolean => v !== null && typeof v === 'object' && typeof (v as { subscribe?: unknown }).subscribe === 'function';

/**
 * Checks `config.approval` and `config.cancelToolCalls` before a run starts: functions where
 * functions go, Observables where Observables go, and — when a tool says `needsApproval` or the
 * config has a `needs` predicate — a way to answer (`decide` or `answers`), since a call waiting
 * for an answer nobody can give would wait forever. Throws AgentError('InvalidConfig') naming the field.
 *
 * @example
 * checkApprovalOptions({ model, approval: { decide: 'yes' } }, tools); // throws: config.approval.decide: expected a function, got string
 */
export function checkApprovalOptions(config: AgentLoopConfig, tools: readonly AnyTool[]): void {
  const approval = (config as { approval?: unknown }).approval;
  const cancel = (config as { cancelToolCalls?: unknown }).cancelToolCalls;
  if (cancel !== undefined && !isObservableLike(cancel)) throw invalid('cancelToolCalls', `expected an Observable of tool call ids, got ${kindOf(cancel)}`);
  if (approval !== undefined) {
    if (approval === null || typeof approval !== 'object') throw invalid('approval', `expected an object, got ${kindOf(approval)}`);
    const a = approval as Record<string, unknown>;
    for (const k of ['needs', 'decide'] as const) {
      if (a[k] !== undefined && typeof a[k] !== 'function') throw invalid(`approval.${k}`, `expected a function, got ${kindOf(a[k])}`);
    }
    if (a.answers !== undefined && !isObservableLike(a.answers)) throw invalid('approval.answers', `expected an Observable of answers, got ${kindOf(a.answers)}`);
  }
  const a = approval as AgentLoopConfig['approval'];
  if (a?.decide || a?.answers) return;
  const asking = tools.findIndex((t) => t.needsApproval !== undefined && t.needsApproval !== false);
  if (asking >= 0) {
    throw invalid('approval', `context.tools[${asking}] "${tools[asking]!.name}" needs approval, but nothing can answer: set config.approval.decide or config.approval.answers (BasicAgent sets answers for agent.approve())`);
  }
  if (a?.needs) throw invalid('approval', 'approval.needs is set, but nothing can answer: set config.approval.decide or config.approval.answers');
}

function invalid(field: string, reason: string): AgentError {
  return new AgentError('InvalidConfig', `config.${field}: ${reason}`);
}
