/**
 * Human approval: a tool that must be approved before it runs. The scripted model asks for three
 * transfers; the person (played here by a few lines reacting to ToolApprovalRequested) approves
 * one as asked, approves one with an edited amount, and denies one with a reason. The model
 * reads all three results, the denial's reason included, and answers.
 *
 * Run it with `npm run example examples/approval.ts`.
 */
import { filter, lastValueFrom } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, textOf, type AgentEvent, type ApprovalDecision, type ToolResultMessage } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const transfer = defineTool({
  name: 'transfer',
  description: 'Transfers money to an account',
  parameters: z.object({ to: z.string(), amount: z.number().positive() }),
  // Small amounts go through; anything over 100 waits for a person.
  needsApproval: ({ amount }) => amount > 100,
  // The person deciding may change the arguments (off by default: an approval runs what the model asked).
  allowEdits: true,
  execute: ({ to, amount }) => `sent ${amount} EUR to ${to}`,
});

const provider = scriptedProvider([
  {
    text: 'Paying the three invoices.',
    toolCalls: [
      { name: 'transfer', arguments: { to: 'landlord', amount: 900 }, id: 'rent' },
      { name: 'transfer', arguments: { to: 'garage', amount: 450 }, id: 'repair' },
      { name: 'transfer', arguments: { to: 'casino', amount: 5000 }, id: 'bet' },
      { name: 'transfer', arguments: { to: 'bakery', amount: 12 }, id: 'bread' },
    ],
  },
  // The model's answer repeats what it was told, so the output shows what it saw.
  (request) => ({
    text: request.messages
      .filter((m): m is ToolResultMessage => m.role === 'toolResult')
      .map((m) => `${m.toolCallId}: ${textOf(m)}`)
      .join('\n'),
  }),
]);

const agent = new BasicAgent({ model: scriptedModel(), provider, tools: [transfer] });

// The person deciding. A UI would show the request and call agent.approve() on a click.
const decisions: Record<string, ApprovalDecision> = {
  rent: { approved: true },
  repair: { approved: true, args: { to: 'garage', amount: 400 }, reason: 'agreed discount' },
  bet: { approved: false, reason: 'not paying gambling debts from this account' },
};
agent.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')).subscribe((e) => {
  // Answered a moment later, as a person would (an answer may also be given right away).
  setTimeout(() => agent.approve(e.toolCallId, decisions[e.toolCallId]!), 10);
});

const show = (e: AgentEvent): void => {
  if (e.type === 'ToolApprovalRequested') console.log(`? ${e.toolCallId}: ${e.toolName}(${JSON.stringify(e.args)}) waits for approval`);
  if (e.type === 'ToolApprovalResolved') console.log(`${e.approved ? '✓' : '✗'} ${e.toolCallId}: ${e.approved ? 'approved' : 'denied'}${e.args ? ` with ${JSON.stringify(e.args)}` : ''}${e.reason ? ` (${e.reason})` : ''}`);
  if (e.type === 'ToolExecutionEnd') console.log(`  ${e.toolCallId} → ${e.isError ? 'error: ' : ''}${e.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}`);
};
agent.events$.subscribe(show);

await lastValueFrom(agent.prompt('Pay this month’s invoices.'));
console.log(`\nmodel › ${textOf(agent.messages.at(-1) as ToolResultMessage).replaceAll('\n', '\n        ')}`);
console.log(`still waiting: ${agent.pendingApprovals().length}`);
