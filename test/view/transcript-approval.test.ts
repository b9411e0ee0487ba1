import { describe, expect, it } from 'vitest';
import { lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, transcript, userMessage, type ApprovalAnswer, type Transcript } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { context, model } from '../agent/helpers.js';

describe('transcript() and approvals', () => {
  it('a call waiting for approval shows as awaitingApproval, then runs with the approved arguments', async () => {
    const pay = defineTool({ name: 'pay', description: 'pays', parameters: z.object({ amount: z.number() }), needsApproval: true, allowEdits: true, execute: ({ amount }) => `paid ${amount}` });
    const answers = new Subject<ApprovalAnswer>();
    const provider = scriptedProvider([{ toolCalls: [{ name: 'pay', arguments: { amount: 9 }, id: 'p1' }] }, { text: 'ok' }]);
    const run$ = agentLoop([userMessage('pay', 0)], context([pay]), { model, provider, retry: false, approval: { answers } }).pipe(
      tap((e) => e.type === 'ToolApprovalRequested' && queueMicrotask(() => answers.next({ toolCallId: 'p1', approved: true, args: { amount: 7 } }))),
    );
    const views: Transcript[] = await lastValueFrom(run$.pipe(transcript(), toArray()));
    const states = views.map((v) => v.toolCalls.map((t) => `${t.status}:${JSON.stringify(t.args)}`).join(',')).filter((s, i, all) => s !== '' && s !== all[i - 1]);
    expect(states).toEqual(['awaitingApproval:{"amount":9}', 'running:{"amount":7}', 'done:{"amount":7}']);
    expect(views.at(-1)!.toolCalls).toHaveLength(1);
  });
});
