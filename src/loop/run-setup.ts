import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentMessage } from '../types/message.js';
import type { Provider } from '../types/provider.js';
import { AgentError } from '../types/errors.js';
import type { TurnTrigger } from '../types/config.js';
import { defaultProviderRegistry } from '../providers/registry.js';
import { checkTools } from '../tools/check-tools.js';
import type { AgentContext, AgentLoopConfig } from './config.js';
import { checkLoopOptions } from './check-options.js';
import { checkApprovalOptions } from './check-approval.js';
import { openToolCalls } from '../types/open-tool-calls.js';
import { checkPrompts } from './check-prompts.js';
import { checkOutputName } from '../output/output-spec.js';
import { defaultIds } from './ids.js';
import { queuedSize } from './steering-inbox.js';

/** What a run is set up with before its first event: checked input, ids, the provider, the clock. */
export interface RunSetup {
  readonly scheduler: SchedulerLike;
  readonly provider: Provider;
  readonly agentId: string;
  readonly sessionId: string;
  readonly loopId: string;
  /** The prompts as checked; `undefined` for a continuation. */
  readonly prompts: readonly AgentMessage[] | undefined;
  /** What the run's first turn is triggered by. */
  readonly firstTrigger: TurnTrigger;
}

/**
 * The run-start checks and what follows from them. Bad options, tools or prompts, and a
 * continuation that has nothing to continue, throw an AgentError before anything is emitted or
 * sent to the model.
 */
export function setUpRun(context: AgentContext, config: AgentLoopConfig, prompts: readonly AgentMessage[] | string | undefined): RunSetup {
  checkLoopOptions(config);
  checkTools(context.tools);
  checkApprovalOptions(config, context.tools);
  if (config.output !== undefined) checkOutputName(config.output, context.tools);
  const scheduler = config.scheduler ?? asyncScheduler;
  const checked = prompts === undefined ? undefined : checkPrompts(prompts, scheduler.now());
  if (prompts === undefined) checkContinuable(context, config);
  const ids = config.ids ?? defaultIds;
  const agentId = context.agentId ?? ids();
  const sessionId = context.sessionId ?? ids();
  const loopId = context.loopId ?? ids();
  const provider = config.provider ?? defaultProviderRegistry().resolve(config.model);
  return { scheduler, provider, agentId, sessionId, loopId, prompts: checked, firstTrigger: firstTrigger(context, config, checked === undefined) };
}

function firstTrigger(context: AgentContext, config: AgentLoopConfig, continuation: boolean): TurnTrigger {
  const kind = context.continuationKind?.kind;
  if (kind === 'branch') return 'branch';
  if (kind !== undefined || continuation) return 'continuation';
  return config.firstTurnTrigger ?? 'user';
}

function checkContinuable(context: AgentContext, config: AgentLoopConfig): void {
  if (!context.agentId || !context.sessionId) {
    throw new AgentError(
      'MissingIds',
      'agentLoopContinue needs context.agentId and context.sessionId: continue the run that produced this context (BasicAgent sets them).',
    );
  }
  if (context.messages.length === 0) throw new AgentError('InvalidContinue', 'Cannot continue: the context has no messages.');
  const last = context.messages[context.messages.length - 1]!;
  const queued = queuedSize(config.steering) + queuedSize(config.followUp);
  if (last.role === 'assistant' && queued === 0 && !openToolCalls(context.messages)) {
    throw new AgentError(
      'InvalidContinue',
      'Cannot continue: the context ends with an assistant message and nothing is queued. Add a user message, steer or follow up first.',
    );
  }
}
