import type { AgentLoopConfig } from './config.js';
import { AgentError } from '../types/errors.js';
import { kindOf } from './check-prompts.js';
import { checkModelChain } from './model-chain.js';
import { checkGuardrails } from './guardrails.js';
import { type OutputSchema, outputSpecOf } from '../output/output-spec.js';

const STEERING_POLICIES = ['wait', 'skip', 'interrupt'];
const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high'];

/**
 * Checks the options of a run before it starts: strategies and policies must be ones the loop
 * knows, limits and timeouts real non-negative numbers. Throws AgentError('InvalidConfig') naming
 * the field (`config.limits.maxTurns: …`); a bad option never silently falls back to a default.
 *
 * @example
 * checkLoopOptions({ model, toolExecution: 'bogus' }); // throws: config.toolExecution: expected …
 */
export function checkLoopOptions(config: AgentLoopConfig): void {
  const c = config as unknown as Record<string, unknown>;
  const te = c.toolExecution;
  if (te !== undefined && te !== 'parallel' && te !== 'sequential') {
    const batched = te !== null && typeof te === 'object' ? (te as { batched?: unknown }).batched : undefined;
    if (!isCount(batched, 1)) {
      throw invalid('toolExecution', `expected "parallel", "sequential" or { batched: n } with n a whole number ≥ 1, got ${te !== null && typeof te === 'object' ? JSON.stringify(te) : kindOf(te)}`);
    }
  }
  oneOf('steeringPolicy', c.steeringPolicy, STEERING_POLICIES);
  oneOf('thinkingLevel', c.thinkingLevel, THINKING_LEVELS);
  const limits = c.limits as Record<string, unknown> | undefined;
  if (limits !== undefined) {
    if (limits === null || typeof limits !== 'object') throw invalid('limits', `expected an object, got ${kindOf(limits)}`);
    count('limits.maxTurns', limits.maxTurns, 0);
    count('limits.maxTotalTokens', limits.maxTotalTokens, 0);
    amount('limits.maxDurationMs', limits.maxDurationMs);
    amount('limits.maxCost', limits.maxCost);
  }
  amount('toolTimeoutMs', c.toolTimeoutMs);
  count('maxTokens', c.maxTokens, 1);
  amount('temperature', c.temperature);
  const retry = c.retry as Record<string, unknown> | false | undefined;
  if (retry !== undefined && retry !== false) {
    if (retry === null || typeof retry !== 'object') throw invalid('retry', `expected an object or false, got ${kindOf(retry)}`);
    count('retry.maxRetries', retry.maxRetries, 0);
    for (const k of ['initialDelayMs', 'maxDelayMs', 'backoffMultiplier']) amount(`retry.${k}`, retry[k]);
    amount('retry.jitter', retry.jitter);
    if (typeof retry.jitter === 'number' && retry.jitter > 1) throw invalid('retry.jitter', `expected a fraction between 0 and 1, got ${retry.jitter}`);
  }
  for (const k of ['steering', 'followUp'] as const) {
    const source = c[k];
    if (source !== undefined && typeof source !== 'function' && !(source !== null && typeof source === 'object' && 'take' in source)) {
      throw invalid(k, `expected a MessageQueue or a function returning messages, got ${kindOf(source)}`);
    }
  }
  if (c.models !== undefined) checkModelChain(c.models, config.model, config.provider);
  if (c.output !== undefined) outputSpecOf(c.output as OutputSchema); // throws InvalidConfig naming config.output
  checkPerTurn(c.stopWhen, c.prepareTurn);
  checkGuardrails(c.guardrails);
  const filters = c.inputFilters;
  if (filters !== undefined) {
    if (!Array.isArray(filters)) throw invalid('inputFilters', `expected an array of functions, got ${kindOf(filters)}`);
    filters.forEach((f, i) => {
      if (typeof f !== 'function') throw invalid(`inputFilters[${i}]`, `expected a function, got ${kindOf(f)}`);
    });
  }
}

function oneOf(field: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    throw invalid(field, `expected ${allowed.map((a) => `"${a}"`).join(', ')}, got ${kindOf(value)}`);
  }
}

function isCount(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min;
}

/** A whole number ≥ min, when set. */
function count(field: string, value: unknown, min: number): void {
  if (value !== undefined && !isCount(value, min)) throw invalid(field, `expected a whole number ≥ ${min}, got ${kindOf(value)}`);
}

/** A finite number ≥ 0, when set. */
function amount(field: string, value: unknown): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
    throw invalid(field, `expected a finite number ≥ 0, got ${kindOf(value)}`);
  }
}

function invalid(field: string, reason: string): AgentError {
  return new AgentError('InvalidConfig', `config.${field}: ${reason}`);
}

/** `stopWhen`: a condition (a function) or an array of them; `prepareTurn`: a function. */
function checkPerTurn(stopWhen: unknown, prepareTurn: unknown): void {
  if (stopWhen !== undefined) {
    const list = Array.isArray(stopWhen) ? stopWhen : [stopWhen];
    list.forEach((c: unknown, i) => {
      if (typeof c !== 'function') throw invalid(Array.isArray(stopWhen) ? `stopWhen[${i}]` : 'stopWhen', `expected a stop condition (a function), got ${kindOf(c)}`);
    });
  }
  if (prepareTurn !== undefined && typeof prepareTurn !== 'function') throw invalid('prepareTurn', `expected a function, got ${kindOf(prepareTurn)}`);
}
