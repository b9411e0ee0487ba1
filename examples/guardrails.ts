/**
 * Guardrails with tripwires: an input guardrail (a slow classifier) runs beside the model and cuts
 * its answer off mid-stream when the request is off-topic; a tool-input guardrail turns down a
 * refund over the limit with a message the model reads; an output guardrail checks the final answer.
 * A scripted provider stands in for the model (it streams a word every 20 ms).
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, textOf, type AgentEvent, type LoopGuardrails, type ToolResultMessage } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const refund = defineTool({
  name: 'refund', description: 'Refunds an order', parameters: z.object({ order: z.string(), amount: z.number() }),
  execute: ({ order, amount }) => `refunded ${amount} EUR for ${order}`,
});

const guardrails: LoopGuardrails = {
  // A classifier that takes 50 ms: the model has started streaming by then.
  input: [{
    name: 'on-topic', mode: 'parallel',
    check: ({ prompts }) => new Promise((resolve) => setTimeout(() => resolve({ tripwire: /homework/i.test(JSON.stringify(prompts)), info: 'not a support question' }), 50)),
  }],
  toolInput: [{ name: 'refund-limit', check: ({ call }) => ({ tripwire: call.name === 'refund' && Number(call.arguments.amount) > 100, message: 'refunds over 100 EUR need a human' }) }],
  output: [{ name: 'no-card-numbers', check: ({ text }) => ({ tripwire: /\b\d{16}\b/.test(text) }) }],
};

/** Runs two prompts and returns what happened, one line each. */
export async function guardrailsDemo(): Promise<string[]> {
  const agent = new BasicAgent({
    model: scriptedModel('support-model'),
    provider: scriptedProvider([
      { text: 'Sure, let us solve the equation step by step first', chunkSize: 5, chunkDelay: 20 },
      { toolCalls: [{ name: 'refund', arguments: { order: 'A-17', amount: 250 } }] },
      { text: 'I could not refund 250 EUR myself; a colleague will get back to you.' },
    ]),
    tools: [refund],
    guardrails,
  });
  const lines: string[] = [];
  let streamed = '';
  const say = (e: AgentEvent): void => {
    if (e.type === 'MessageUpdate' && e.delta.type === 'text') streamed += e.delta.delta;
    if (e.type === 'GuardrailTripped') lines.push(e.toolCallId ? `turned down by ${e.guardrail}` : `tripped: ${e.guardrail} (${String(e.info)}) after "${streamed}"`);
    if (e.type === 'ToolExecutionEnd') lines.push(`${e.toolName} › ${textOf({ content: e.result.content } as ToolResultMessage)}`);
    if (e.type === 'MessageEnd' && e.message.role === 'assistant' && textOf(e.message) !== '') lines.push(`agent › ${textOf(e.message)}`);
    if (e.type === 'AgentEnd') lines.push(`[done: ${e.stopReason}]`);
  };
  await lastValueFrom(agent.prompt('Can you do my maths homework?').pipe(tap(say), toArray()));
  streamed = '';
  await lastValueFrom(agent.prompt('Please refund order A-17, 250 EUR.').pipe(tap(say), toArray()));
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const line of await guardrailsDemo()) console.log(line);
}
