import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, defineTool, handoff, textOf, userMessage, type AgentSpec, type Guardrail, type InputGuardrailContext } from '../../src/index.js';
import { addTool, agentEnd, config, context, events, run } from '../agent/helpers.js';

const toolCycle = [{ text: 'adding', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }];
const trips = (name: string, mode?: 'parallel' | 'blocking'): Guardrail<InputGuardrailContext> => ({ name, check: () => ({ tripwire: true, info: { by: name } }), ...(mode ? { mode } : {}) });
const passes = (name: string, mode?: 'parallel' | 'blocking'): Guardrail<InputGuardrailContext> => ({ name, check: () => ({ tripwire: false }), ...(mode ? { mode } : {}) });

describe('input guardrails in the loop', () => {
  it('a blocking one that trips ends the run before the model is called', async () => {
    const cfg = config(toolCycle, { guardrails: { input: [passes('polite', 'blocking'), trips('on-topic', 'blocking')] } });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(cfg.provider.requests).toHaveLength(0);
    expect(all.filter((e) => e.type !== 'MessageUpdate').map((e) => (e.type === 'MessageStart' || e.type === 'MessageEnd' ? `${e.type}:${e.message.role}` : e.type))).toEqual([
      'AgentStart', 'TurnStart', 'MessageStart:user', 'MessageEnd:user',
      'GuardrailTripped', 'MessageStart:assistant', 'MessageEnd:assistant', // the trip, and the turn's stop message
      'TurnEnd', 'AgentEnd',
    ]);
    const end = agentEnd(all);
    expect(end).toMatchObject({ stopReason: 'guardRail', stoppedBy: { kind: 'guardrail', guardrail: 'on-topic', stage: 'input', info: { by: 'on-topic' } } });
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(textOf(end.messages[1] as never)).toBe('[Stopped by guardrail: on-topic]');
  });

  it('a parallel one that trips after the call ended still stops the run: the model\'s tool calls never run', async () => {
    let ran = 0;
    const counted = defineTool({ name: 'add', description: 'Adds', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => (ran++, String(a + b)) });
    const slow: Guardrail<InputGuardrailContext> = { name: 'slow-judge', check: () => new Promise((resolve) => setTimeout(() => resolve({ tripwire: true }), 30)) };
    const all = await run(toolCycle, [counted], { guardrails: { input: [slow] } });
    expect(ran).toBe(0);
    const kinds = all.map((e) => e.type);
    expect(kinds.indexOf('GuardrailTripped')).toBeGreaterThan(kinds.indexOf('MessageEnd'));
    expect(agentEnd(all)).toMatchObject({ stopReason: 'guardRail', stoppedBy: { guardrail: 'slow-judge' } });
    expect(agentEnd(all).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('parallel ones that pass let the run go on: only its first call is checked', async () => {
    let checked = 0;
    const counting: Guardrail<InputGuardrailContext> = { name: 'count', check: async ({ prompts }) => (checked++, { tripwire: textOf(prompts[0] as never) === 'forbidden' }) };
    const all = await run(toolCycle, [addTool], { guardrails: { input: [counting] } });
    expect(checked).toBe(1);
    expect(agentEnd(all).stopReason).toBe('stop');
    expect(all.some((e) => e.type === 'GuardrailTripped')).toBe(false);
  });

  it('a guardrail that throws is a HookError, and trips (default) or passes (onError: "pass")', async () => {
    const broken: Guardrail<InputGuardrailContext> = { name: 'broken', check: () => { throw new Error('classifier down'); } };
    const tripped = await run(toolCycle, [addTool], { guardrails: { input: [broken] } });
    expect(tripped.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'guardrail', message: 'input guardrail "broken" failed: classifier down' });
    expect(tripped.find((e) => e.type === 'GuardrailTripped')).toMatchObject({ guardrail: 'broken', error: 'classifier down' });
    expect(agentEnd(tripped).stopReason).toBe('guardRail');
    const passed = await run(toolCycle, [addTool], { guardrails: { input: [broken], onError: 'pass' } });
    expect(passed.filter((e) => e.type === 'HookError')).toHaveLength(1);
    expect(agentEnd(passed).stopReason).toBe('stop');
  });
});

describe('output guardrails in the loop', () => {
  it('check the final answer before AgentEnd: a trip ends the run as guardRail', async () => {
    const noDigits = { name: 'no-digits', check: ({ text }: { text: string }) => ({ tripwire: /\d/.test(text), info: text }) };
    const all = await run([{ text: 'It is 3.' }], [], { guardrails: { output: [noDigits] } });
    expect(all.map((e) => e.type).slice(-3)).toEqual(['TurnEnd', 'GuardrailTripped', 'AgentEnd']);
    expect(agentEnd(all)).toMatchObject({ stopReason: 'guardRail', stoppedBy: { kind: 'guardrail', guardrail: 'no-digits', stage: 'output', info: 'It is 3.' } });
    const clean = await run([{ text: 'It is three.' }], [], { guardrails: { output: [noDigits] } });
    expect(agentEnd(clean).stopReason).toBe('stop');
  });

  it('see the structured output, and a trip withholds it', async () => {
    const output = z.object({ city: z.string() });
    const notParis = { name: 'not-paris', check: ({ output: value }: { output?: unknown }) => ({ tripwire: (value as { city?: string } | undefined)?.city === 'Paris' }) };
    const end = agentEnd(await run([{ text: '{"city":"Paris"}' }], [], { output, guardrails: { output: [notParis] } }));
    expect(end.stopReason).toBe('guardRail');
    expect(end.output).toBeUndefined();
  });
});

describe('tool guardrails in the loop', () => {
  it('a tool-input trip rejects the call with a message to the model, and the run goes on', async () => {
    const noBigSums = { name: 'small-sums', check: ({ call }: { call: { arguments: Record<string, unknown> } }) => ({ tripwire: (call.arguments.a as number) > 0, message: 'only sums of zero here' }) };
    const cfg = config(toolCycle, { guardrails: { toolInput: [noBigSums] } });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    const result = agentEnd(all).messages.find((m) => m.role === 'toolResult');
    expect(result).toMatchObject({ isError: true });
    expect(textOf(result as never)).toBe('Rejected by guardrail "small-sums": only sums of zero here');
    expect(cfg.provider.requests).toHaveLength(2); // the model heard of it
    expect(agentEnd(all)).toMatchObject({ stopReason: 'stop' });
    expect(agentEnd(all).stoppedBy).toBeUndefined();
    // The trip is announced before the call's result, naming the call.
    const kinds = all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type);
    expect(kinds.slice(kinds.indexOf('GuardrailTripped'), kinds.indexOf('GuardrailTripped') + 3)).toEqual(['GuardrailTripped', 'ToolExecutionStart', 'ToolExecutionEnd']);
    const call = agentEnd(all).messages.find((m) => m.role === 'assistant');
    expect(all.find((e) => e.type === 'GuardrailTripped')).toMatchObject({
      guardrail: 'small-sums', kind: 'toolInput', turnIndex: 0, toolCallId: (call as { content: Array<{ id?: string }> }).content.find((c) => c.id)!.id,
    });
  });

  it('a tool guardrail that throws is a HookError; it rejects the call (default) or lets it run (onError: "pass")', async () => {
    const broken = { name: 'broken', check: (): never => { throw new Error('policy service down'); } };
    const rejected = await run(toolCycle, [addTool], { guardrails: { toolInput: [broken] } });
    expect(rejected.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'guardrail', message: 'toolInput guardrail "broken" failed: policy service down' });
    expect(textOf(agentEnd(rejected).messages.find((m) => m.role === 'toolResult') as never)).toBe('Rejected by guardrail "broken": the check failed: policy service down');
    const passed = await run(toolCycle, [addTool], { guardrails: { toolInput: [broken], toolOutput: [broken], onError: 'pass' } });
    expect(passed.filter((e) => e.type === 'HookError').map((e) => (e as { message: string }).message)).toEqual([
      'toolInput guardrail "broken" failed: policy service down', 'toolOutput guardrail "broken" failed: policy service down',
    ]);
    expect(textOf(agentEnd(passed).messages.find((m) => m.role === 'toolResult') as never)).toBe('3');
  });

  it('a tool-input guardrail checks a call before it waits for approval: a call it turns down is never put to a person', async () => {
    let asked = 0;
    const never = { name: 'never', check: () => ({ tripwire: true, message: 'not today' }) };
    const all = await run(toolCycle, [addTool], { guardrails: { toolInput: [never] }, approval: { needs: () => true, decide: () => (asked++, { approved: true }) } });
    expect(asked).toBe(0);
    expect(all.some((e) => e.type === 'ToolApprovalRequested')).toBe(false);
    expect(textOf(agentEnd(all).messages.find((m) => m.role === 'toolResult') as never)).toBe('Rejected by guardrail "never": not today');
  });

  it('a tool-output trip replaces the result the model sees', async () => {
    const noThrees = { name: 'no-threes', check: ({ result }: { result: { content: Array<{ type: string; text?: string }> } }) => ({ tripwire: textOf(result) === '3' }) };
    const all = await run(toolCycle, [addTool], { guardrails: { toolOutput: [noThrees] } });
    const result = agentEnd(all).messages.find((m) => m.role === 'toolResult');
    expect(textOf(result as never)).toBe('Withheld by guardrail "no-threes"');
    expect(all.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ isError: true });
    expect(all.find((e) => e.type === 'GuardrailTripped')).toMatchObject({ guardrail: 'no-threes', kind: 'toolOutput', toolCallId: (result as { toolCallId: string }).toolCallId });
  });

  it('bad guardrails fail the run before any event, naming the entry', async () => {
    await expect(run(toolCycle, [addTool], { guardrails: { input: [{ name: 'x', check: 'no' as never }] } })).rejects.toThrow('config.guardrails.input[0].check: expected a function');
    await expect(run(toolCycle, [addTool], { guardrails: { inputs: [] } as never })).rejects.toThrow('config.guardrails.inputs: unknown kind');
  });
});


describe('guardrails and handoffs', () => {
  it('input guardrails check the run\'s first call only, not the first call of the agent a handoff hands the run to', async () => {
    let checked = 0;
    const counting: Guardrail<InputGuardrailContext> = { name: 'count', check: () => (checked++, { tripwire: false }) };
    const billing: AgentSpec = { name: 'billing', systemPrompt: 'You answer billing questions.', tools: [] };
    const cfg = config([
      { toolCalls: [{ name: 'transfer_to_billing', arguments: {}, id: 'h1' }] },
      { text: 'Your bill is fine.' },
    ], { agentName: 'triage', guardrails: { input: [counting] } });
    const all = await events(agentLoop([userMessage('my bill?', 0)], context([handoff(billing)]), cfg));
    expect(all.some((e) => e.type === 'Handoff')).toBe(true);
    expect(agentEnd(all)).toMatchObject({ agent: 'billing', stopReason: 'stop' });
    expect(checked).toBe(1);
  });
});
