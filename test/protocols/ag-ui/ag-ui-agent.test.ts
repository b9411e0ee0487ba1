/**
 * A phi-rx agent as an in-process AG-UI agent: `phiRxAgUiAgent(AbstractAgent)` from the real
 * `@ag-ui/client`, driven through AG-UI's own `runAgent` (which verifies every event it applies).
 */
import { describe, expect, it } from 'vitest';
import { AbstractAgent, EventType, type BaseEvent, type Message } from '@ag-ui/client';
import { filter, type Observable, tap } from 'rxjs';
import type { AnyTool } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { createAgUiAgent, phiRxAgUiAgent } from '../../../src/protocols/ag-ui/index.js';

const PhiRxAgent = phiRxAgUiAgent(AbstractAgent);
const user = (id: string, content: string): Message => ({ id, role: 'user', content });

describe('phiRxAgUiAgent', () => {
  it('is an AbstractAgent whose runAgent runs the phi-rx loop: text and a tool result in the client\'s messages', async () => {
    const echo: AnyTool = { name: 'echo', label: 'echo', description: 'echo', parameters: { type: 'object' }, execute: (a) => JSON.stringify(a) };
    const provider = scriptedProvider([{ thinking: 'hm', toolCalls: [{ name: 'echo', id: 'e1', arguments: { v: 1 } }] }, { text: 'Echoed.' }]);
    const agent = new PhiRxAgent({ config: { model: scriptedModel(), provider }, tools: [echo] }, { threadId: 't1', initialMessages: [user('u1', 'echo 1')] });
    expect(agent).toBeInstanceOf(AbstractAgent);
    const { newMessages } = await agent.runAgent({ runId: 'r1' });
    expect(newMessages.map((m) => m.role)).toEqual(['reasoning', 'assistant', 'tool', 'assistant']);
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Echoed.' });
    expect(agent.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: 'e1', content: '{"v":1}' });
  });

  it('abortRun aborts the phi-rx run gracefully: the client sees it finish cancelled, with the text so far', async () => {
    const provider = scriptedProvider([{ text: 'y'.repeat(200), chunkDelay: 10 }]);
    const agent = new PhiRxAgent({ config: { model: scriptedModel(), provider } }, { initialMessages: [user('u1', 'go')] });
    let outcome: string | undefined;
    let deltas = 0;
    await agent.runAgent({}, {
      onTextMessageContentEvent: () => void (++deltas === 2 && agent.abortRun()),
      onRunFinishedEvent: (p) => void (outcome = p.outcome),
    });
    expect(outcome).toBe('cancelled');
    const text = (agent.messages.at(-1) as { content?: string }).content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(200);
  });

  it('an approval interrupt and its resume, in-process', async () => {
    let ran = 0;
    const rm: AnyTool = { name: 'rm', label: 'rm', description: 'rm', parameters: { type: 'object' }, execute: () => `ok ${++ran}`, needsApproval: true };
    const provider = scriptedProvider([{ toolCalls: [{ name: 'rm', id: 'k1' }] }, { text: 'Done.' }]);
    const agent = new PhiRxAgent({ config: { model: scriptedModel(), provider }, tools: [rm] }, { initialMessages: [user('u1', 'rm')] });
    await agent.runAgent();
    expect(agent.pendingInterrupts.map((i) => i.toolCallId)).toEqual(['k1']);
    await agent.runAgent({ resume: [{ interruptId: 'k1', status: 'resolved' }] });
    expect(ran).toBe(1);
    expect(agent.messages.at(-1)).toMatchObject({ content: 'Done.' });
  });

  it('createAgUiAgent imports @ag-ui/client itself', async () => {
    const agent = await createAgUiAgent({ config: { model: scriptedModel(), provider: scriptedProvider([{ text: 'hi' }]) } }, { initialMessages: [user('u1', 'x')] });
    expect(agent).toBeInstanceOf(AbstractAgent);
  });

  it('takes AG-UI middleware: (input, next) => Observable, here one that drops the CUSTOM events and counts the rest', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'echo', id: 'e1', arguments: { v: 2 } }] }, { text: 'Echoed.' }]);
    const echo: AnyTool = { name: 'echo', label: 'echo', description: 'echo', parameters: { type: 'object' }, execute: (a) => JSON.stringify(a) };
    const agent = new PhiRxAgent({ config: { model: scriptedModel(), provider }, tools: [echo] }, { initialMessages: [user('u1', 'echo 2')] });
    const passed: string[] = [];
    agent.use((input, next) => (next.run(input) as unknown as Observable<BaseEvent>).pipe(filter((e) => e.type !== EventType.CUSTOM), tap((e) => passed.push(e.type))) as never);
    const customs: string[] = [];
    await agent.runAgent({}, { onCustomEvent: ({ event }) => void customs.push(event.name) });
    expect(customs).toEqual([]);
    expect(passed).toContain('TOOL_CALL_RESULT');
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Echoed.' });
  });
});
