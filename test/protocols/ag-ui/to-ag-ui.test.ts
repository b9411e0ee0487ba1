import { describe, expect, it } from 'vitest';
import { defer, filter, lastValueFrom, NEVER, type Observable, scan, startWith, throwError, toArray } from 'rxjs';
import { agentLoop, userMessage, type AgentEvent, type AgentLoopConfig, type AnyTool } from '../../../src/index.js';
import { AgentError, ProviderError } from '../../../src/types/errors.js';
import { agentTestScheduler, scriptedModel, scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { agUiEvents, toAgUiMessages, type AgUiEvent, type AgUiEventsOptions } from '../../../src/protocols/ag-ui/index.js';
import { agUiLetters, checkAgUi, lettersOf } from './ag-ui-check.js';

const model = scriptedModel();
const tool = (name: string, execute: AnyTool['execute'] = (args) => `${name}(${JSON.stringify(args)})`, extra: Partial<AnyTool> = {}): AnyTool =>
  ({ name, label: name, description: name, parameters: { type: 'object' }, execute, ...extra });
const context = (tools: AnyTool[] = []) => ({ systemPrompt: '', messages: [], tools, agentId: 'a', sessionId: 'thread-1', loopId: 'run-1' });

/** A run's AG-UI events (real time), checked by AG-UI's schemas and `verifyEvents`. */
async function agUiRun(script: ScriptStep[], config: Partial<AgentLoopConfig> = {}, tools: AnyTool[] = [], options: AgUiEventsOptions = {}): Promise<AgUiEvent[]> {
  const provider = scriptedProvider(script);
  const events = await lastValueFrom(agentLoop([userMessage('hi', 0)], context(tools), { model, provider, ...config }).pipe(agUiEvents(options), toArray()));
  return checkAgUi(events);
}

const ofType = <T extends AgUiEvent['type']>(events: AgUiEvent[], type: T) => events.filter((e): e is Extract<AgUiEvent, { type: T }> => e.type === type);

describe('agUiEvents: marbles', () => {
  it('maps a text run: RUN_STARTED, a step per turn, the prompt and the answer as text messages, RUN_FINISHED', () => {
    agentTestScheduler().run(({ expectObservable }) => {
      const provider = scriptedProvider([{ text: 'Hi there' }]); // two deltas of four characters
      const run$ = agentLoop([userMessage('hi', 0)], context(), { model, provider, scheduler: agentTestScheduler() });
      expectObservable(defer(() => run$).pipe(agUiEvents(), agUiLetters())).toBe('(RSbcebcceFD|)');
    });
  });

  it('follows the source in time: a text message opens with its first delta and the run finishes with AgentEnd', () => {
    agentTestScheduler().run(({ cold, expectObservable }) => {
      const provider = scriptedProvider([{ text: 'Hi there' }]);
      // AgentStart, TurnStart, the prompt's MessageStart and MessageEnd, the answer's start, two updates and end, TurnEnd, AgentEnd
      const [A, T, s, e, S, u, v, m, t, Z] = collect(provider, 'hi');
      const source = cold('A-T-s-e-----S-u-----v-m-t-Z|', { A, T, s, e, S, u, v, m, t, Z });
      expectObservable(source.pipe(agUiEvents(), agUiLetters())).toBe('R-S---(bce)---(bc)--c-e-F-D|');
    });
  });

  it('ends the output once the run only waits for an approval: RUN_FINISHED with an interrupt, the run unsubscribed', () => {
    agentTestScheduler().run(({ expectObservable }) => {
      const scheduler = agentTestScheduler();
      const provider = scriptedProvider([{ toolCalls: [{ name: 'rm', id: 'call-1', arguments: { path: '/x' } }] }]);
      const rm = tool('rm', () => 'removed', { needsApproval: true });
      const run$ = agentLoop([userMessage('hi', 0)], context([rm]), { model, provider, scheduler, approval: { answers: NEVER } });
      expectObservable(run$.pipe(agUiEvents({ interruptApprovals: true }), agUiLetters())).toBe('(RSbceTaaaECFD|)');
    });
  });
});

/** The events of a script played synchronously (no delays), to replay at chosen frames. */
function collect(provider: ReturnType<typeof scriptedProvider>, prompt: string): AgentEvent[] {
  const out: AgentEvent[] = [];
  agentTestScheduler().run(() => {
    agentLoop([userMessage(prompt, 0)], context(), { model, provider, scheduler: agentTestScheduler() }).subscribe((e) => out.push(e));
  });
  return out;
}

describe('agUiEvents: sequences AG-UI verifies', () => {
  it('the check is AG-UI\'s own: a sequence it forbids is rejected', async () => {
    const started: AgUiEvent = { type: 'RUN_STARTED', threadId: 't', runId: 'r' };
    await expect(checkAgUi([started, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'x' }])).rejects.toThrow(/No active text message/);
    await expect(checkAgUi([started, { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' }, { type: 'RUN_FINISHED', threadId: 't', runId: 'r' }])).rejects.toThrow(/text messages are still active/);
  });

  it('text: one text message per assistant message, its deltas as they came', async () => {
    const events = await agUiRun([{ text: 'Hello world' }]);
    const answer = ofType(events, 'TEXT_MESSAGE_START').find((e) => e.role === 'assistant')!;
    expect(ofType(events, 'TEXT_MESSAGE_CONTENT').filter((e) => e.messageId === answer.messageId).map((e) => e.delta)).toEqual(['Hell', 'o wo', 'rld']);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 'thread-1', runId: 'run-1', outcome: { type: 'success' }, result: { stopReason: 'stop' } });
  });

  it('thinking: a reasoning span and message, its signature as REASONING_ENCRYPTED_VALUE', async () => {
    const events = await agUiRun([{ thinking: { text: 'Let me see', signature: 'sig-1' }, text: 'Yes.' }]);
    expect(lettersOf(events)).toBe('RSbcerghhhivjbceFD');
    expect(ofType(events, 'REASONING_ENCRYPTED_VALUE')[0]).toMatchObject({ subtype: 'message', encryptedValue: 'sig-1' });
  });

  it('parallel tool calls: each call streamed and closed (arguments complete), then each result', async () => {
    const events = await agUiRun(
      [{ toolCalls: [{ name: 'a', id: 'c1', arguments: { x: 1 } }, { name: 'b', id: 'c2', arguments: { y: 2 } }] }, { text: 'Done.' }],
      { toolExecution: 'parallel' },
      [tool('a'), tool('b')],
    );
    expect(ofType(events, 'TOOL_CALL_START').map((e) => [e.toolCallId, e.toolCallName])).toEqual([['c1', 'a'], ['c2', 'b']]);
    const args = (id: string) => ofType(events, 'TOOL_CALL_ARGS').filter((e) => e.toolCallId === id).map((e) => e.delta).join('');
    expect(JSON.parse(args('c1'))).toEqual({ x: 1 });
    expect(ofType(events, 'TOOL_CALL_RESULT').map((e) => [e.toolCallId, e.content])).toEqual([['c1', 'a({"x":1})'], ['c2', 'b({"y":2})']]);
    expect(events.findIndex((e) => e.type === 'TOOL_CALL_END' && e.toolCallId === 'c2')).toBeLessThan(events.findIndex((e) => e.type === 'TOOL_CALL_RESULT'));
  });

  it('abort mid-stream: the open text message is closed and the run finishes cancelled', async () => {
    const abort = new AbortController();
    const provider = scriptedProvider([{ text: 'A long answer that will not finish', chunkDelay: 5 }]);
    const run$ = agentLoop([userMessage('hi', 0)], context(), { model, provider, signal: abort.signal });
    const seen: AgUiEvent[] = [];
    await new Promise<void>((done) =>
      run$.pipe(agUiEvents()).subscribe({
        next: (e) => {
          seen.push(e);
          if (e.type === 'TEXT_MESSAGE_CONTENT' && seen.filter((x) => x.type === 'TEXT_MESSAGE_CONTENT').length === 3) abort.abort();
        },
        complete: done,
      }),
    );
    await checkAgUi(seen);
    expect(seen.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' }, result: { stopReason: 'aborted' } });
  });

  it('a provider error ends the run with RUN_ERROR carrying its message', async () => {
    const events = await agUiRun([{ error: ProviderError.auth('bad key') }], { retry: false });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'PROVIDER_ERROR' });
    expect((events.at(-1) as { message: string }).message).toContain('bad key');
  });

  it('a provider error mid-message: RUN_ERROR with the text message still open is a valid end', async () => {
    const events = await agUiRun([{ text: 'Half an answer', errorAfter: 3, error: ProviderError.auth('gone') }], { retry: false });
    expect(lettersOf(events).startsWith('RSbce')).toBe(true);
    expect(events.at(-1)!.type).toBe('RUN_ERROR');
  });

  it('a source error before AgentStart is a RUN_ERROR alone, which AG-UI accepts as a first event', async () => {
    const events = await lastValueFrom(throwError(() => new AgentError('InvalidConfig', 'no model')).pipe(agUiEvents(), toArray()));
    expect(lettersOf(await checkAgUi(events))).toBe('X');
  });

  it('events AG-UI has no event for become CUSTOM phi-rx:{type}, none dropped', async () => {
    const provider = scriptedProvider([{ error: ProviderError.network('reset') }, { toolCalls: [{ name: 'a', id: 'c1' }] }, { text: 'ok' }]);
    const raw = await lastValueFrom(agentLoop([userMessage('hi', 0)], context([tool('a')]), { model, provider, retry: { initialDelayMs: 1, maxRetries: 2 } }).pipe(toArray()));
    const events = await checkAgUi(await lastValueFrom(defer(() => raw).pipe(agUiEvents(), toArray())));
    const unmapped = raw.filter((e) => ['RetryScheduled', 'ToolExecutionStart', 'ToolExecutionEnd'].includes(e.type)).map((e) => `phi-rx:${e.type}`);
    expect(ofType(events, 'CUSTOM').map((e) => e.name)).toEqual(unmapped);
    expect(unmapped).toContain('phi-rx:RetryScheduled');
  });

  it('a retry that diverged re-syncs the client: CUSTOM phi-rx:MessageReset, then a MESSAGES_SNAPSHOT without the half-shown message', async () => {
    const provider = scriptedProvider([{ text: 'First try that', errorAfter: 2, error: ProviderError.network('reset') }, { text: 'Other answer' }]);
    const prior = toAgUiMessages([userMessage('hi', 0)], () => 'u0');
    const run$ = agentLoop([userMessage('hi', 0)], context(), { model, provider, retry: { initialDelayMs: 1 } });
    const events = await checkAgUi(await lastValueFrom(run$.pipe(agUiEvents({ messages: prior }), toArray())));
    const reset = ofType(events, 'CUSTOM').find((e) => e.name === 'phi-rx:MessageReset');
    expect(reset).toBeDefined();
    const discarded = (reset!.value as { discardedMessageId: string }).discardedMessageId;
    const after = events.slice(events.indexOf(reset!));
    expect(ofType(after, 'MESSAGES_SNAPSHOT')[0]!.messages.map((m) => m.id)).not.toContain(discarded);
    expect(ofType(events, 'MESSAGES_SNAPSHOT').at(-1)!.messages.filter((m) => m.role === 'assistant').map((m) => (m as { content?: string }).content)).toEqual(['Other answer']);
  });

  it('with the prior conversation, the output starts and ends with a snapshot: the client ends with toAgUiMessages of every message', async () => {
    const prior = toAgUiMessages([userMessage('earlier', 0)], () => 'u0');
    const provider = scriptedProvider([{ toolCalls: [{ name: 'a', id: 'c1', arguments: { x: 1 } }] }, { text: 'Done.' }]);
    const raw = await lastValueFrom(agentLoop([userMessage('hi', 0)], context([tool('a')]), { model, provider }).pipe(toArray()));
    const events = await checkAgUi(await lastValueFrom(defer(() => raw).pipe(agUiEvents({ messages: prior }), toArray())));
    expect(events[1]).toEqual({ type: 'MESSAGES_SNAPSHOT', messages: prior });
    const end = raw.at(-1) as Extract<AgentEvent, { type: 'AgentEnd' }>;
    const final = ofType(events, 'MESSAGES_SNAPSHOT').at(-1)!.messages;
    expect(final.slice(1).map(({ id: _id, ...m }) => m)).toEqual(toAgUiMessages(end.messages).map(({ id: _id, ...m }) => m));
  });

  it('a call of a client tool ends the output: RUN_FINISHED with the call pending, after the server tools of the batch', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'server', id: 'c1' }, { name: 'confirm', id: 'c2' }] }]);
    const run$ = agentLoop([userMessage('hi', 0)], context([tool('server'), tool('confirm', () => NEVER)]), { model, provider, toolExecution: 'parallel' });
    const out = await checkAgUi(await lastValueFrom(run$.pipe(agUiEvents({ clientTools: ['confirm'] }), toArray())));
    expect(out.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success', pendingToolCallIds: ['c2'] } });
    expect(ofType(out, 'TOOL_CALL_RESULT').map((e) => e.toolCallId)).toEqual(['c1']);
  });

  it('cost stays flat: the bytes per delta are the same for a turn of 200 and of 2,000 deltas (no event carries the text so far)', async () => {
    const bytesPerDelta = async (n: number) => {
      const events = await agUiRun([{ text: 'abcd'.repeat(n) }]);
      return ofType(events, 'TEXT_MESSAGE_CONTENT').reduce((sum, e) => sum + JSON.stringify(e).length, 0) / n;
    };
    const [small, large] = [await bytesPerDelta(200), await bytesPerDelta(2000)];
    expect(large).toBeCloseTo(small, 0);
  });

  it('a state derived from the events: STATE_SNAPSHOT first, then STATE_DELTA as it changes', async () => {
    const stateFrom = (events$: Observable<AgentEvent>) =>
      events$.pipe(
        filter((e) => e.type === 'ToolExecutionEnd'),
        scan((s, e) => ({ ...s, ran: [...s.ran, e.toolName] }), { ran: [] as string[], phase: 'tools' }),
        startWith({ ran: [] as string[], phase: 'tools' }),
      );
    const events = await agUiRun([{ toolCalls: [{ name: 'a', id: 'c1' }, { name: 'b', id: 'c2' }] }, { text: 'ok' }], {}, [tool('a'), tool('b')], { stateFrom });
    expect(ofType(events, 'STATE_SNAPSHOT').map((e) => e.snapshot)).toEqual([{ ran: [], phase: 'tools' }]);
    expect(ofType(events, 'STATE_DELTA').map((e) => e.delta)).toEqual([[{ op: 'replace', path: '/ran', value: ['a'] }], [{ op: 'replace', path: '/ran', value: ['a', 'b'] }]]);
    expect(events.findIndex((e) => e.type === 'STATE_SNAPSHOT')).toBeGreaterThan(events.findIndex((e) => e.type === 'RUN_STARTED'));
  });
});
