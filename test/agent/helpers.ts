import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { firstValueFrom, lastValueFrom, type Observable, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import { z } from 'zod';
import {
  agentLoop, defineTool, userMessage, type AgentContext, type AgentEvent, type AgentLoopConfig, type AgentMessage, type AnyTool,
} from '../../src/index.js';
import { describeEvent, scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';

export const model = scriptedModel();

export function context(tools: AnyTool[] = [], messages: AgentMessage[] = []): AgentContext {
  return { systemPrompt: 'You are a test.', messages, tools, agentId: 'agent-1', sessionId: 'session-1', loopId: 'session-1.scripted.1' };
}

export const addTool = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

export function config(script: ScriptStep[], extra: Partial<AgentLoopConfig> = {}): AgentLoopConfig & { provider: ReturnType<typeof scriptedProvider> } {
  return { model, provider: scriptedProvider(script), retry: false, ...extra } as AgentLoopConfig & { provider: ReturnType<typeof scriptedProvider> };
}

export async function events(run$: Observable<AgentEvent>): Promise<AgentEvent[]> {
  return lastValueFrom(run$.pipe(toArray()));
}

/** Event trace without MessageUpdate noise. */
export async function trace(run$: Observable<AgentEvent>): Promise<string[]> {
  return (await events(run$)).filter((e) => e.type !== 'MessageUpdate').map(describeEvent);
}

export async function run(script: ScriptStep[], tools: AnyTool[] = [addTool], extra: Partial<AgentLoopConfig> = {}, prompt = 'hi'): Promise<AgentEvent[]> {
  return events(agentLoop([userMessage(prompt, 0)], context(tools), config(script, extra)));
}

export function agentEnd(all: AgentEvent[]): Extract<AgentEvent, { type: 'AgentEnd' }> {
  const end = all.filter((e) => e.type === 'AgentEnd');
  expect(end).toHaveLength(1);
  return end[0] as Extract<AgentEvent, { type: 'AgentEnd' }>;
}

export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

export { firstValueFrom };

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs `test/agent/fixtures/<name>.ts` in a child process with the given Node flags (what a test
 * cannot set in its own process: `--expose-gc`, `--allow-natives-syntax`) and returns the JSON of
 * the last line it prints.
 */
export async function fixtureReport(name: string, nodeFlags: readonly string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeFlags, '--import', 'tsx', path.join('test', 'agent', 'fixtures', `${name}.ts`)],
    { cwd: repoRoot, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

type Update = Extract<AgentEvent, { type: 'MessageUpdate' }>;
const DELTA_FIELDS = ['type', 'contentIndex', 'delta'];
const FIRST_TOOL_DELTA_FIELDS = [...DELTA_FIELDS, 'id', 'name'];

/**
 * What a subscriber that comes late to a shared run catches up on, written out plainly: every
 * event as it was, but consecutive deltas to one block of one loop as one update — their texts
 * joined, the last one's message and time. A delta with another field (a tool-argument delta
 * that names its call) does not join the one before; the first of a tool call's may name it.
 */
export function caughtUp(events: readonly AgentEvent[]): AgentEvent[] {
  const out: AgentEvent[] = [];
  for (const e of events) {
    const before = out[out.length - 1];
    if (e.type === 'MessageUpdate' && before?.type === 'MessageUpdate' && joins(before, e)) {
      out[out.length - 1] = { ...e, delta: { ...before.delta, delta: before.delta.delta + e.delta.delta } };
    } else {
      out.push(e);
    }
  }
  return out;
}

function joins(before: Update, e: Update): boolean {
  const [a, b] = [before.delta, e.delta];
  if (before.loopId !== e.loopId || a.type !== b.type || a.contentIndex !== b.contentIndex) return false;
  const only = (d: object, fields: string[]): boolean => Object.keys(d).every((k) => fields.includes(k));
  return only(b, DELTA_FIELDS) && only(a, a.type === 'toolCall' ? FIRST_TOOL_DELTA_FIELDS : DELTA_FIELDS);
}
