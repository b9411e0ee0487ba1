import { catchError, concatMap, defer, filter, map, type Observable, of, takeLast, takeUntil, throwIfEmpty } from 'rxjs';
import type { EvaluationContext, EvaluationStrategy, EvaluationVerdict, ParallelOutcome, ParallelOutcomes } from './evaluate-parallel.js';
import { retryBackoff } from '../operators/retry-backoff.js';
import { compactMessages } from '../context/compaction.js';
import { DEFAULT_CACHE_CONFIG, DEFAULT_CONTEXT_CONFIG, NO_RETRY, type ContextConfig } from '../types/config.js';
import { AgentError, errorMessage } from '../types/errors.js';
import { type AgentMessage, type AssistantMessage, type LlmMessage, type Message, isLlm, textOf, userMessage } from '../types/message.js';
import type { StreamRequest } from '../types/provider.js';
import { Usage } from '../types/usage.js';
import { fromAbortSignal } from '../sources/cancellation.js';
import { defaultProviderRegistry } from '../providers/registry.js';
import type { AgentLoopConfig } from '../loop/config.js';

// ---- helpers for any strategy ------------------------------------------------------------------

/** The outcomes a strategy may select: branches that ended without failing, in config order. */
export function candidatesOf(outcomes: readonly ParallelOutcome[]): ParallelOutcome[] {
  return outcomes.filter((o) => !o.failed);
}

/** When every branch failed there is nothing to compare: keep branch 0's failed turn, and say so. */
function allFailed(input: ParallelOutcomes): EvaluationVerdict {
  const reasons = input.outcomes.map((o) => `${o.configIndex}: ${o.error !== undefined ? errorMessage(o.error) : o.rejection ?? o.stopReason}`);
  return {
    index: 0,
    warnings: [`all ${input.outcomes.length} branches failed (${reasons.join('; ')}); selected branch 0 so its failed turn is kept`],
  };
}

/** The best candidate by `score` (ties go to the lower config index), or the all-failed verdict. */
function bestBy(input: ParallelOutcomes, better: (a: number, b: number) => boolean, score: (o: ParallelOutcome) => number): EvaluationVerdict {
  const candidates = candidatesOf(input.outcomes);
  if (candidates.length === 0) return allFailed(input);
  let best = candidates[0]!;
  for (const o of candidates.slice(1)) if (better(score(o), score(best))) best = o;
  return best.configIndex;
}

const totalTokens = (o: ParallelOutcome): number => Usage.tokensOf(o.usage);

// ---- the arithmetic strategies -----------------------------------------------------------------

/**
 * One branch, passed through. More than one is a typed `StrategyError`, raised before any
 * branch runs (the seed panicked here).
 */
const Transparent: EvaluationStrategy = {
  name: 'Transparent',
  check: checkSingleBranch,
  evaluate(input) {
    checkSingleBranch(input.outcomes.length);
    return 0;
  },
};

function checkSingleBranch(count: number): void {
  if (count !== 1) {
    throw new AgentError(
      'StrategyError',
      `Evaluation strategy "Transparent" passes exactly one branch through, but ${count} were given; ` +
        'use PickFirst, TokenEfficient, Elaborate, LlmJudge or a custom strategy to choose among several.',
    );
  }
}

/** The first branch, in config order, that did not fail. */
const PickFirst: EvaluationStrategy = {
  name: 'PickFirst',
  evaluate: (input) => bestBy(input, () => false, () => 0),
};

/** The successful branch that spent the fewest tokens (usage.totalTokens). */
const TokenEfficient: EvaluationStrategy = {
  name: 'TokenEfficient',
  evaluate: (input) => bestBy(input, (a, b) => a < b, totalTokens),
};

/** The successful branch that spent the most tokens: the most elaborate answer. */
const Elaborate: EvaluationStrategy = {
  name: 'Elaborate',
  evaluate: (input) => bestBy(input, (a, b) => a > b, totalTokens),
};

/**
 * A race: `agentLoopParallel` aborts the other branches when the first one succeeds, and that
 * branch wins. Standalone, it picks the successful branch that finished first.
 */
const FirstToFinish: EvaluationStrategy = {
  name: 'FirstToFinish',
  race: true,
  evaluate: (input) => bestBy(input, (a, b) => a < b, (o) => o.finishOrder),
};

// ---- LlmJudge ------------------------------------------------------------------------------------

/** The judge's model: any AgentLoopConfig will do (its tools, hooks and queues are not used). */
export type LlmJudgeConfig = Pick<
  AgentLoopConfig,
  'model' | 'provider' | 'contextConfig' | 'maxTokens' | 'temperature' | 'thinkingLevel' | 'retry' | 'random' | 'cacheConfig'
>;

export interface LlmJudgeOptions {
  judge: LlmJudgeConfig;
  /** Replaces DEFAULT_JUDGE_SYSTEM_PROMPT. */
  systemPrompt?: string;
  /**
   * When the judge cannot decide — its reply names no single response twice in a row, or its
   * call fails — `error` (default) fails the evaluation with a `StrategyError`; `{ fallbackIndex }`
   * selects that branch (0-based, config order) and emits a warning.
   */
  onUndecided?: 'error' | { fallbackIndex: number };
}

export const DEFAULT_JUDGE_SYSTEM_PROMPT =
  'You are an impartial judge. Several assistants answered the same user request independently. ' +
  'Compare their responses for correctness, helpfulness and completeness given the conversation; do not prefer a response for its length alone. ' +
  'Reply with only the number of the best response.';

/**
 * A separate model call picks the winner. The judge sees the user query, the prior conversation
 * and every successful branch's output, numbered from 1, and answers with a number. A reply that
 * does not name exactly one response is asked again once; after that the declared `onUndecided`
 * applies (never a silent pick).
 *
 * The prompt is fitted to the judge's context budget (`judge.contextConfig`, else the default
 * ContextConfig) in two iterations of the three compaction tiers: first the prior context alone,
 * keeping the outputs intact; then prior context and each output independently. If even that does
 * not fit, every section is cut to a character share and a warning says the judge may not have
 * seen everything.
 *
 * With one successful branch the judge is not called; when the run was aborted it is skipped and
 * the first successful branch is selected, with a warning.
 */
function LlmJudge(options: LlmJudgeOptions): EvaluationStrategy {
  return {
    name: 'LlmJudge',
    evaluate: (input, context) => judge(input, context, options),
  };
}

/** The built-in strategies of spec 000 (plus FirstToFinish), by name. */
export const Evaluation = { Transparent, PickFirst, TokenEfficient, Elaborate, FirstToFinish, LlmJudge };

function judge(input: ParallelOutcomes, context: EvaluationContext, options: LlmJudgeOptions): EvaluationResult$ {
  const candidates = candidatesOf(input.outcomes);
  if (candidates.length === 0) return of(allFailed(input));
  if (context.signal?.aborted) {
    return of({ index: candidates[0]!.configIndex, warnings: ['the run was aborted, so the judge was not asked; selected the first successful branch'] });
  }
  if (candidates.length === 1) return of(candidates[0]!.configIndex);
  const cfg = options.judge;
  const contextConfig: ContextConfig = { ...DEFAULT_CONTEXT_CONFIG, ...cfg.contextConfig };
  const prompt = fitJudgePrompt(judgeSections(input, candidates), contextConfig);
  const usage = Usage.empty();
  const n = candidates.length;
  const ask = (messages: Message[]): Observable<{ reply: AssistantMessage; choice: number | undefined }> =>
    callJudge(cfg, options.systemPrompt ?? DEFAULT_JUDGE_SYSTEM_PROMPT, messages, input.sessionId, context).pipe(
      map((reply) => {
        Usage.accumulate(usage, reply.usage);
        return { reply, choice: parseChoice(textOf(reply), n) };
      }),
    );
  const first: Message[] = [userMessage(prompt.text, 0)];
  const undecided = (why: string): EvaluationVerdict => {
    const fallback = options.onUndecided ?? 'error';
    if (fallback === 'error') throw new AgentError('StrategyError', `Evaluation strategy "LlmJudge" could not decide: ${why}.`);
    return { index: fallback.fallbackIndex, usage, warnings: [...prompt.warnings, `${why}; selected the declared fallback branch ${fallback.fallbackIndex}`] };
  };
  return ask(first).pipe(
    concatMap((answer) => (answer.choice !== undefined ? of(answer) : ask([...first, answer.reply, userMessage(retryText(answer.reply, n), 0)]))),
    map((answer): EvaluationVerdict => {
      if (answer.choice === undefined) {
        return undecided(`the judge's reply did not name one response (1-${n}) in 2 attempts; last reply: ${JSON.stringify(clip(textOf(answer.reply), 200))}`);
      }
      return { index: candidates[answer.choice - 1]!.configIndex, usage, warnings: prompt.warnings };
    }),
    catchError((e: unknown) => {
      if (e instanceof AgentError) throw e; // undecided() with onUndecided 'error'
      if (context.signal?.aborted) {
        return of({ index: candidates[0]!.configIndex, usage, warnings: ['the run was aborted while the judge was deciding; selected the first successful branch'] });
      }
      return of(undecided(`the judge call failed (${errorMessage(e)})`));
    }),
  );
}

type EvaluationResult$ = Observable<EvaluationVerdict>;

/** One judge call: the final assistant message, retried per the judge's retry config, cut by abort. */
function callJudge(cfg: LlmJudgeConfig, systemPrompt: string, messages: Message[], sessionId: string, context: EvaluationContext): Observable<AssistantMessage> {
  return defer(() => {
    const provider = cfg.provider ?? defaultProviderRegistry().resolve(cfg.model);
    const request: StreamRequest = {
      model: cfg.model,
      systemPrompt,
      messages,
      tools: [],
      thinkingLevel: cfg.thinkingLevel ?? 'off',
      ...(cfg.maxTokens !== undefined ? { maxTokens: cfg.maxTokens } : {}),
      ...(cfg.temperature !== undefined ? { temperature: cfg.temperature } : {}),
      cacheConfig: cfg.cacheConfig ?? DEFAULT_CACHE_CONFIG,
      ...(cfg.model.apiKey !== undefined ? { apiKey: cfg.model.apiKey } : {}),
      sessionId,
    };
    return provider(request, { ...(context.signal ? { signal: context.signal } : {}), scheduler: context.scheduler }).pipe(
      retryBackoff(cfg.retry === false ? NO_RETRY : (cfg.retry ?? {}), { scheduler: context.scheduler, ...(cfg.random ? { random: cfg.random } : {}) }),
      takeUntil(fromAbortSignal(context.signal)),
      filter((e) => e.type === 'done'),
      takeLast(1),
      throwIfEmpty(() => new Error('the judge stream ended without a reply')),
      map((e) => {
        const reply = (e as Extract<typeof e, { type: 'done' }>).message;
        if (reply.stopReason === 'error' || reply.stopReason === 'aborted') throw new Error(reply.errorMessage ?? `the reply stopped with ${reply.stopReason}`);
        return reply;
      }),
    );
  });
}

/**
 * The 1-based response number a reply names: the single distinct integer within 1..n it contains.
 * "2", "Response 2." and "**2**" parse; "1 or 2", "none" and "7" (of 3) do not.
 */
export function parseChoice(reply: string, n: number): number | undefined {
  const numbers = new Set((reply.match(/\d+/g) ?? []).map(Number).filter((k) => k >= 1 && k <= n));
  return numbers.size === 1 ? [...numbers][0] : undefined;
}

function retryText(reply: AssistantMessage, n: number): string {
  return `Your reply ${JSON.stringify(clip(textOf(reply), 200))} does not name one response. Reply with a single number from 1 to ${n} and nothing else.`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

// ---- the judge's prompt and its two-iteration compaction ----------------------------------------

interface JudgeSections {
  prior: AgentMessage[];
  /** The query, plus anything that followed it in a continued context. */
  query: AgentMessage[];
  outputs: AgentMessage[][];
}

/** Splits the conversation into prior context, the user query and each candidate's output. */
function judgeSections(input: ParallelOutcomes, candidates: readonly ParallelOutcome[]): JudgeSections {
  const base = input.baseMessages.slice(0, input.originalContextLen);
  let prior: AgentMessage[];
  let query: AgentMessage[];
  if (input.prompts.length > 0) {
    prior = base;
    query = [...input.prompts];
  } else {
    // Continue mode: the query is the last user message already in the context.
    let at = base.length - 1;
    while (at >= 0 && base[at]!.role !== 'user') at--;
    prior = at < 0 ? base : base.slice(0, at);
    query = at < 0 ? [] : base.slice(at);
  }
  // A branch's messages start with the prompts it was given; its output is what came after.
  const outputs = candidates.map((o) => {
    const start = o.messages.findIndex((m) => m.role !== 'user' && m.role !== 'extension');
    return start < 0 ? [] : o.messages.slice(start);
  });
  return { prior, query, outputs };
}

interface JudgePrompt {
  text: string;
  /** 0: fit as is; 1: prior context compacted; 2: outputs compacted too; 3: cut to character shares. */
  iteration: 0 | 1 | 2 | 3;
  warnings: string[];
}

interface RenderedSections {
  prior: string;
  query: string;
  outputs: string[];
}

/** Characters the judge's user message may take: budget tokens at ~4 chars each, less per-message framing. */
function charBudget(config: ContextConfig): number {
  const budget = Math.max(0, config.maxContextTokens - config.systemPromptTokens);
  return Math.max(0, (budget - 4) * 4);
}

function fitJudgePrompt(sections: JudgeSections, config: ContextConfig): JudgePrompt {
  const maxChars = charBudget(config);
  const query = renderMessages(sections.query) || '(no user message)';
  const render = (prior: readonly AgentMessage[], outputs: ReadonlyArray<readonly AgentMessage[]>): RenderedSections => ({
    prior: renderMessages(prior),
    query,
    outputs: outputs.map(renderMessages),
  });
  const whole = render(sections.prior, sections.outputs);
  if (promptText(whole).length <= maxChars) return { text: promptText(whole), iteration: 0, warnings: [] };

  // Iteration 1: the prior context alone gives way; the outputs are what is being judged.
  const room = maxChars - promptText({ ...whole, prior: '' }).length;
  const prior1 = room > 0 ? compactMessages(sections.prior, config, Math.floor(room / 4)).messages : [];
  const first = { ...whole, prior: renderMessages(prior1) };
  if (promptText(first).length <= maxChars) return { text: promptText(first), iteration: 1, warnings: [] };

  // Iteration 2: prior context and each output get a fair share and are compacted independently.
  const shares = fairShares([sections.prior, ...sections.outputs].map((m) => renderMessages(m).length), maxChars - fixedLength(whole));
  const [priorShare, ...outputShares] = shares;
  const compacted = (messages: readonly AgentMessage[], share: number): AgentMessage[] =>
    share > 0 ? compactMessages(messages, config, Math.floor(share / 4)).messages : [];
  const second = render(compacted(sections.prior, priorShare!), sections.outputs.map((o, i) => compacted(o, outputShares[i]!)));
  if (promptText(second).length <= maxChars) return { text: promptText(second), iteration: 2, warnings: [] };

  // Last resort: cut every section (the query too) to its character share.
  const texts = [second.query, second.prior, ...second.outputs];
  const caps = fairShares(texts.map((t) => t.length), maxChars - fixedLength(second));
  const [q, p, ...outs] = texts.map((t, i) => cut(t, caps[i]!));
  const final = { query: q!, prior: p!, outputs: outs };
  return {
    text: promptText(final),
    iteration: 3,
    warnings: [
      `the judge prompt did not fit the judge's budget of ${config.maxContextTokens - config.systemPromptTokens} tokens after compacting the prior context and the outputs; ` +
        'sections were cut to fit, so the judge may not have seen every response in full',
    ],
  };
}

/** Splits `total` characters among sections: short ones keep all they have, long ones share the rest equally. */
function fairShares(lengths: readonly number[], total: number): number[] {
  const shares = new Array<number>(lengths.length).fill(0);
  let remaining = Math.max(0, total);
  let left = lengths.length;
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]!);
  for (const i of order) {
    const share = Math.min(lengths[i]!, Math.floor(remaining / left));
    shares[i] = share;
    remaining -= share;
    left--;
  }
  return shares;
}

const CUT_MARKER = '\n[... cut to fit the judge budget ...]';

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= CUT_MARKER.length) return text.slice(0, Math.max(0, max));
  return text.slice(0, max - CUT_MARKER.length) + CUT_MARKER;
}

/** The prompt's length with every section empty: what the framing itself costs. */
function fixedLength(s: RenderedSections): number {
  return promptText({ prior: '', query: '', outputs: s.outputs.map(() => '') }).length;
}

function promptText(s: RenderedSections): string {
  const n = s.outputs.length;
  const parts = [
    `Judge ${n} candidate responses to the same user request.`,
    `<prior_conversation>\n${s.prior || '(none)'}\n</prior_conversation>`,
    `<user_query>\n${s.query}\n</user_query>`,
    ...s.outputs.map((o, i) => `<response number="${i + 1}">\n${o}\n</response>`),
    `Which response best answers the user query, given the prior conversation? Reply with the number of the best response (1-${n}) and nothing else.`,
  ];
  return parts.join('\n\n');
}

function renderMessages(messages: readonly AgentMessage[]): string {
  return messages.filter(isLlm).map(renderMessage).join('\n\n');
}

function renderMessage(m: LlmMessage): string {
  switch (m.role) {
    case 'user':
      return `User: ${m.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('')}`;
    case 'assistant': {
      const parts = m.content.flatMap((c) => {
        if (c.type === 'text') return [c.text];
        if (c.type === 'toolCall') return [`[called ${c.name} ${JSON.stringify(c.arguments)}]`];
        return []; // thinking: the judge rates answers, not deliberation
      });
      return `Assistant: ${parts.join('\n')}`;
    }
    case 'toolResult':
      return `Tool result (${m.toolName}${m.isError ? ', error' : ''}): ${m.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('')}`;
  }
}
