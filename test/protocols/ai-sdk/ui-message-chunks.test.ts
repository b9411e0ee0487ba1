import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { z } from 'zod';
import { BasicAgent, defineTool, emptyAssistant, ProviderError, subAgentTool, type AgentEvent, type AssistantMessage } from '../../../src/index.js';
import { scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { uiMessageChunks, type UIMessageChunk } from '../../../src/protocols/ai-sdk/index.js';
import { model } from '../../agent/helpers.js';
import { expectValidChunks, readMessage } from './ai-sdk-client.js';

const add = defineTool({ name: 'add', description: 'adds', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });
const boom = defineTool({ name: 'boom', description: 'fails', parameters: z.object({}), execute: () => { throw new Error('kaput'); } });
const deploy = defineTool({ name: 'deploy', description: 'deploys', parameters: z.object({ env: z.string() }), needsApproval: true, execute: ({ env }) => `deployed to ${env}` });

function agent(script: ScriptStep[], extra: Record<string, unknown> = {}): BasicAgent {
  return new BasicAgent({ model, retry: false, tools: [add, boom, deploy], provider: scriptedProvider(script), ...extra } as never);
}

const chunksOf = (events$: Observable<AgentEvent>): Promise<UIMessageChunk[]> => lastValueFrom(events$.pipe(uiMessageChunks({ messageId: 'answer-1' }), toArray()));
const types = (chunks: UIMessageChunk[]) => chunks.filter((c) => !c.type.startsWith('data-')).map((c) => c.type);

describe('uiMessageChunks', () => {
  it('maps a turn to start, a step, a text part from its deltas and finish, in virtual time', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    ts.run(({ cold, expectObservable }) => {
      const loopId = 'L';
      const partial: AssistantMessage = emptyAssistant('m', 'p', 0);
      const final: AssistantMessage = { ...partial, content: [{ type: 'text', text: 'Hi!' }] };
      const events: Record<string, AgentEvent> = {
        a: { type: 'AgentStart', agentId: 'A', sessionId: 'S', loopId, timestamp: 0 },
        t: { type: 'TurnStart', loopId, turnIndex: 0, timestamp: 0, triggeredBy: 'user' },
        s: { type: 'MessageStart', loopId, message: partial, timestamp: 0 },
        u: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 0, delta: 'Hi' }, timestamp: 0 },
        v: { type: 'MessageUpdate', loopId, message: partial, delta: { type: 'text', contentIndex: 0, delta: '!' }, timestamp: 0 },
        m: { type: 'MessageEnd', loopId, message: final, timestamp: 0 },
        e: { type: 'TurnEnd', loopId, turnIndex: 0, message: final, usage: final.usage, toolResults: [], timestamp: 0 },
        z: { type: 'AgentEnd', loopId, messages: [final], usage: final.usage, stopReason: 'stop', timestamp: 0 },
      };
      const source = cold('a 9ms t 9ms s 9ms u 9ms v 9ms m 9ms e 9ms (z|)', events);
      const expected: Record<string, UIMessageChunk> = {
        S: { type: 'start', messageId: 'M' },
        A: { type: 'data-phi-agent-start', data: { agentId: 'A', sessionId: 'S', loopId, timestamp: 0 } },
        P: { type: 'start-step' },
        T: { type: 'data-phi-turn-start', data: { loopId, turnIndex: 0, timestamp: 0, triggeredBy: 'user' }, transient: true },
        b: { type: 'text-start', id: 't0' },
        d: { type: 'text-delta', id: 't0', delta: 'Hi' },
        D: { type: 'text-delta', id: 't0', delta: '!' },
        x: { type: 'text-end', id: 't0' },
        F: { type: 'finish-step' },
        E: { type: 'data-phi-turn-end', data: { turnIndex: 0, usage: final.usage }, transient: true },
        Z: { type: 'data-phi-agent-end', data: { loopId, usage: final.usage, stopReason: 'stop', timestamp: 0 } },
        f: { type: 'finish', finishReason: 'stop' },
      };
      expectObservable(source.pipe(uiMessageChunks({ messageId: 'M' }))).toBe('(SA) 6ms (PT) 16ms (bd) 6ms D 9ms x 9ms (FE) 6ms (Zf|)', expected);
    });
  });

  it('a failed run ends with an error chunk, its open text part closed first', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    ts.run(({ cold, expectObservable }) => {
      const partial = emptyAssistant('m', 'p', 0);
      const events: Record<string, AgentEvent> = {
        a: { type: 'AgentStart', agentId: 'A', sessionId: 'S', loopId: 'L', timestamp: 0 },
        u: { type: 'MessageUpdate', loopId: 'L', message: partial, delta: { type: 'text', contentIndex: 0, delta: 'Hi' }, timestamp: 0 },
      };
      const chunks = cold('a 9ms u 9ms #', events, new Error('socket closed')).pipe(uiMessageChunks());
      expectObservable(chunks).toBe('(sA) 6ms (bd) 6ms (xe|)', {
        s: { type: 'start' },
        A: { type: 'data-phi-agent-start', data: { agentId: 'A', sessionId: 'S', loopId: 'L', timestamp: 0 } },
        b: { type: 'text-start', id: 't0' },
        d: { type: 'text-delta', id: 't0', delta: 'Hi' },
        x: { type: 'text-end', id: 't0' },
        e: { type: 'error', errorText: 'socket closed' },
      });
    });
  });

  it('text and reasoning: valid chunks the ai package reads into a reasoning part (with its signature) and a text part', async () => {
    const chunks = await chunksOf(agent([{ thinking: { text: 'Let me think', signature: 'sig-1' }, text: 'Reactive UIs stream.' }]).prompt('Hi'));
    await expectValidChunks(chunks);
    expect(types(chunks)).toEqual(['start', 'start-step', 'reasoning-start', 'reasoning-delta', 'reasoning-delta', 'reasoning-delta', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'reasoning-end', 'text-end', 'finish-step', 'finish']);
    const message = await readMessage(chunks);
    expect(message?.id).toBe('answer-1');
    expect(message?.parts.filter((p) => p.type === 'reasoning' || p.type === 'text')).toMatchObject([
      { type: 'reasoning', text: 'Let me think', state: 'done', providerMetadata: { phi: { signature: 'sig-1', redacted: false } } },
      { type: 'text', text: 'Reactive UIs stream.', state: 'done' },
    ]);
  });

  it('parallel tool calls, one failing: input streamed, then each output or error, in a second step', async () => {
    const chunks = await chunksOf(agent([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 }, id: 'c1' }, { name: 'boom', id: 'c2' }] }, { text: 'It is 3.' }]).prompt('1+2?'));
    await expectValidChunks(chunks);
    const message = await readMessage(chunks);
    const tools = message?.parts.filter((p) => p.type.startsWith('tool-'));
    expect(tools).toEqual([
      { type: 'tool-add', toolCallId: 'c1', state: 'output-available', input: { a: 1, b: 2 }, output: { content: [{ type: 'text', text: '3' }] } },
      { type: 'tool-boom', toolCallId: 'c2', state: 'output-error', input: {}, errorText: expect.stringContaining('kaput') },
    ]);
    expect(message?.parts.filter((p) => p.type === 'step-start')).toHaveLength(2);
    expect(chunks.filter((c) => c.type === 'tool-input-delta').map((c) => 'inputTextDelta' in c && c.inputTextDelta).join('')).toBe('{"a":1,"b":2}{}');
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
  });

  it('a provider error is an error chunk the client reports, and the run still finishes', async () => {
    const chunks = await chunksOf(agent([{ error: ProviderError.auth('bad key') }]).prompt('Hi'));
    await expectValidChunks(chunks);
    const errors: unknown[] = [];
    await readMessage(chunks, errors);
    expect(errors.map((e) => (e as Error).message)).toEqual([expect.stringContaining('bad key')]);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'error' });
  });

  it('an aborted run ends with abort, its open parts closed', async () => {
    const a = agent([{ text: 'a long answer that is cut', chunkDelay: 5 }]);
    const chunks: UIMessageChunk[] = [];
    await new Promise<void>((done) => a.prompt('Hi').pipe(uiMessageChunks()).subscribe({
      next: (c) => { chunks.push(c); if (c.type === 'text-delta') a.abort(); },
      complete: done,
    }));
    await expectValidChunks(chunks);
    expect(chunks.at(-1)).toMatchObject({ type: 'abort' });
    expect(chunks.filter((c) => c.type === 'text-start').length).toBe(chunks.filter((c) => c.type === 'text-end').length);
  });

  it('approval: a tool-approval-request for the call (its id the call id); a denial becomes tool-output-denied', async () => {
    const a = agent([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'd1' }] }, { text: 'Not deployed.' }]);
    const chunks: UIMessageChunk[] = [];
    await new Promise<void>((done) => a.prompt('ship').pipe(uiMessageChunks()).subscribe({
      next: (c) => { chunks.push(c); if (c.type === 'tool-approval-request') queueMicrotask(() => a.approve(c.toolCallId, { approved: false, reason: 'not today' })); },
      complete: done,
    }));
    await expectValidChunks(chunks);
    expect(chunks).toContainEqual({ type: 'tool-approval-request', approvalId: 'd1', toolCallId: 'd1' });
    const message = await readMessage(chunks);
    expect(message?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({ state: 'output-denied', toolCallId: 'd1' });
    expect(chunks).toContainEqual(expect.objectContaining({ type: 'data-phi-tool-approval-resolved', data: expect.objectContaining({ toolCallId: 'd1', approved: false, reason: 'not today' }) }));
  });

  it('events without a chunk of their own become data-phi-* parts, never dropped (a retry here)', async () => {
    const chunks = await chunksOf(agent([{ error: ProviderError.network('reset') }, { text: 'ok' }], { retry: { maxRetries: 1, baseDelayMs: 1 } }).prompt('Hi'));
    await expectValidChunks(chunks);
    expect(chunks).toContainEqual(expect.objectContaining({ type: 'data-phi-retry-scheduled', data: expect.objectContaining({ attempt: 1, errorMessage: expect.stringContaining('reset') }) }));
    expect((await readMessage(chunks))?.parts.some((p) => p.type === 'data-phi-retry-scheduled')).toBe(true);
  });

  it('a retry that streamed something else: the open part is closed, data-phi-message-reset says so, the new text is a new part', async () => {
    const chunks = await chunksOf(agent([{ text: 'First try', error: ProviderError.network('reset'), errorAfter: 2 }, { text: 'Second' }], { retry: { maxRetries: 1, baseDelayMs: 1 } }).prompt('Hi'));
    await expectValidChunks(chunks);
    const texts = chunks.filter((c) => c.type.startsWith('text-') || c.type === 'data-phi-message-reset').map((c) => c.type);
    expect(texts).toEqual(['text-start', 'text-delta', 'text-end', 'data-phi-message-reset', 'text-start', 'text-delta', 'text-delta', 'text-end']);
    const message = await readMessage(chunks);
    expect(message?.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Firs', 'Second']);
  });

  it('a tool\'s partial results (a sub-agent streaming its answer) are preliminary outputs, then the final one', async () => {
    const researcher = subAgentTool({ name: 'researcher', model, provider: scriptedProvider([{ text: 'The answer is 42.' }]) });
    const a = new BasicAgent({ model, retry: false, tools: [researcher], provider: scriptedProvider([{ toolCalls: [{ name: 'researcher', arguments: { task: 'find it' }, id: 'r1' }] }, { text: 'Found: 42.' }]) });
    const chunks = await chunksOf(a.prompt('research'));
    await expectValidChunks(chunks);
    const outputs = chunks.filter((c) => c.type === 'tool-output-available');
    expect(outputs.length).toBeGreaterThan(1);
    expect(outputs.slice(0, -1).every((c) => 'preliminary' in c && c.preliminary === true)).toBe(true);
    expect(outputs.at(-1)).not.toHaveProperty('preliminary');
    const message = await readMessage(chunks);
    expect(message?.parts.find((p) => p.type === 'tool-researcher')).toMatchObject({ state: 'output-available', output: { content: [{ type: 'text', text: 'The answer is 42.' }] } });
    expect(message?.parts.find((p) => p.type === 'tool-researcher')).not.toHaveProperty('preliminary', true);
  });

  it('keeps no copy of the text so far: 2,000 deltas make 2,000 chunks of one delta each', async () => {
    const text = 'abcd'.repeat(2000);
    const chunks = await chunksOf(agent([{ text }]).prompt('long'));
    const deltas = chunks.filter((c) => c.type === 'text-delta');
    expect(deltas).toHaveLength(2000);
    const sizes = chunks.map((c) => JSON.stringify(c).length);
    expect(Math.max(...sizes)).toBeLessThan(600); // no chunk holds the message (8,000 characters)
    expect(deltas.map((c) => ('delta' in c ? c.delta : '')).join('')).toBe(text);
  });
});
