import { describe, expect, it } from 'vitest';
import { APPROVAL_FORM, answerOf, approvalMessage, decisionOf } from '../../../src/integrations/mcp/elicitation.js';

/* Tool approval as MCP elicitation: the form's answers as decisions, decisions as answers. */

describe('decisionOf (a client’s answer to the approval form)', () => {
  it('accept with approved: true approves, keeping a reason', () => {
    expect(decisionOf({ action: 'accept', content: { approved: true } })).toEqual({ approved: true });
    expect(decisionOf({ action: 'accept', content: { approved: true, reason: 'fine' } })).toEqual({ approved: true, reason: 'fine' });
  });

  it('accept with approved: false, decline and cancel deny, each saying why', () => {
    expect(decisionOf({ action: 'accept', content: { approved: false, reason: 'not today' } })).toEqual({ approved: false, reason: 'not today' });
    expect(decisionOf({ action: 'accept', content: { approved: false } })).toEqual({ approved: false, reason: 'the user denied it' });
    expect(decisionOf({ action: 'accept', content: { approved: 'yes' } })).toEqual({ approved: false, reason: 'the user denied it' });
    expect(decisionOf({ action: 'decline' })).toEqual({ approved: false, reason: 'the user declined' });
    expect(decisionOf({ action: 'cancel' })).toEqual({ approved: false, reason: 'the user dismissed the approval request' });
  });
});

describe('answerOf (a phi-rx decision as the answer to a server’s form)', () => {
  const nameForm = { type: 'object' as const, properties: { name: { type: 'string' } }, required: ['name'] };

  it('answers the approval form with approved and the reason, also when denying', () => {
    expect(answerOf({ approved: true }, APPROVAL_FORM)).toEqual({ action: 'accept', content: { approved: true } });
    expect(answerOf({ approved: false, reason: 'no' }, APPROVAL_FORM)).toEqual({ action: 'accept', content: { approved: false, reason: 'no' } });
  });

  it('answers another form with the decision’s args when approving, and declines when denying', () => {
    expect(answerOf({ approved: true, args: { name: 'Ada' } }, nameForm)).toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(answerOf({ approved: false, reason: 'private' }, nameForm)).toEqual({ action: 'decline' });
  });

  it('round-trips: a phi-rx client’s decision reaches a phi-rx server as the same decision', () => {
    for (const decision of [{ approved: true }, { approved: false, reason: 'not on Friday' }]) {
      expect(decisionOf(answerOf(decision, APPROVAL_FORM))).toEqual(decision);
    }
  });
});

describe('approvalMessage', () => {
  it('names the server, the tool and its arguments, and cuts long arguments', () => {
    const request = { loopId: 'l', toolCallId: 'c', toolName: 'deploy', args: { target: 'prod' } };
    expect(approvalMessage(request, 'ops')).toBe('ops asks to run the tool "deploy" with the arguments {"target":"prod"}. Approve?');
    const long = approvalMessage({ ...request, args: { text: 'x'.repeat(5000) } }, 'ops');
    expect(long.length).toBeLessThan(2200);
    expect(long).toContain('… (5011 characters in all)');
  });
});
