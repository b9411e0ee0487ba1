/**
 * Handoffs: a triage agent hands the customer to billing, billing hands on to refunds, refunds
 * answers. One run, one loop: each turn is the active agent's (its prompt, tools, model), a
 * `Handoff` event marks each change, `AgentEnd.agent` names the agent that answered last, and the
 * agent keeps talking to refunds on the next prompt. A scripted provider plays the model; with a
 * real one, each agent's `model` may be another provider's.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, handoff, textOf, withoutToolCalls, type AgentEvent, type AgentSpec, type AssistantMessage } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const refund = defineTool({
  name: 'refund', description: 'Refunds an order', parameters: z.object({ order: z.string(), amount: z.number() }),
  execute: ({ order, amount }) => `Refunded ${amount} EUR for ${order}.`,
});

const refunds: AgentSpec = { name: 'refunds', description: 'refunds orders', systemPrompt: 'You refund orders.', tools: [refund] };
const billing: AgentSpec = {
  name: 'billing', description: 'answers billing questions', systemPrompt: 'You answer billing questions.',
  tools: [handoff(refunds, { inputFilter: withoutToolCalls })], // refunds reads the conversation, not billing's tool calls
};

/** Two prompts to a triage agent; returns what happened, one line each. */
export async function handoffDemo(): Promise<string[]> {
  const agent = new BasicAgent({
    model: scriptedModel(),
    provider: scriptedProvider([
      { toolCalls: [{ name: 'transfer_to_billing', arguments: { reason: 'double charge' } }] }, // triage
      { toolCalls: [{ name: 'transfer_to_refunds', arguments: { reason: 'refund A-17' } }] }, // billing
      { toolCalls: [{ name: 'refund', arguments: { order: 'A-17', amount: 40 } }] }, // refunds
      { text: 'I refunded the second charge of 40 EUR for order A-17.' },
      { text: 'The refund reaches your card within 3 days.' }, // refunds again, on the next prompt
    ]),
    agentName: 'triage',
    systemPrompt: 'You route customers to the right agent.',
    tools: [handoff(billing)],
  });
  const lines: string[] = [];
  const say = (e: AgentEvent): void => {
    if (e.type === 'Handoff') lines.push(`handoff: ${e.from} → ${e.to} (${String(e.arguments.reason)})`);
    if (e.type === 'MessageEnd' && e.message.role === 'assistant' && textOf(e.message as AssistantMessage)) lines.push(`› ${textOf(e.message as AssistantMessage)}`);
    if (e.type === 'AgentEnd') lines.push(`answered by ${e.agent}`);
  };
  await lastValueFrom(agent.prompt('I was charged twice for order A-17.').pipe(tap(say), toArray()));
  await lastValueFrom(agent.prompt('When will I see it?').pipe(tap(say), toArray()));
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const line of await handoffDemo()) console.log(line);
}
