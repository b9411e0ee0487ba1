/**
 * Two agents talking A2A (the Agent2Agent protocol, 1.0) on this machine: a calculator agent served
 * with `a2aServer` (its card, JSON-RPC and REST on a local port, a bearer token required), and a
 * coordinator that calls it through `a2aAgentTool`. The calculator's text streams back to the
 * coordinator as tool updates. Scripted models: no API key. Needs `@a2a-js/sdk` and `express`.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, type AgentEndEvent } from 'phi-rx';
import { a2aAgentTool, a2aServer } from 'phi-rx/a2a';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const multiply = defineTool({
  name: 'multiply',
  description: 'Multiplies two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a * b),
});

export async function main(write: (s: string) => void = (s) => process.stdout.write(s)): Promise<AgentEndEvent> {
  const token = randomUUID();
  // The remote agent: one BasicAgent per A2A context, made from these options.
  const calculatorModel = scriptedProvider([
    { toolCalls: [{ name: 'multiply', arguments: { a: 6, b: 7 } }] },
    { text: '6 times 7 is 42.' },
  ]);
  const server = await a2aServer({ model: scriptedModel('calculator-model'), provider: calculatorModel, tools: [multiply] }, {
    card: {
      name: 'Calculator',
      description: 'Does arithmetic with its tools',
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer', description: 'a token', bearerFormat: '' } } } },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    },
    // The card is public; everything else needs the token.
    authorize: (req, { route }) => route === 'card' || req.headers.authorization === `Bearer ${token}`,
  });
  const url = await server.listen();
  write(`calculator serves A2A at ${url} (card: ${url}/.well-known/agent-card.json)\n`);
  try {
    // The local agent: the remote one is a tool (its name and description come from the card).
    const calculator = await a2aAgentTool(url, { bearerToken: token });
    write(`tool ${calculator.name}: ${calculator.description.split('\n')[0]}\n`);
    const coordinator = new BasicAgent({
      model: scriptedModel('coordinator-model'),
      provider: scriptedProvider([
        { toolCalls: [{ name: calculator.name, arguments: { task: 'What is 6 times 7?' } }] },
        { text: 'The calculator says 42.' },
      ]),
      tools: [calculator],
    });
    let streamed = '';
    const end = await lastValueFrom(coordinator.prompt('Ask the calculator for 6 x 7.').pipe(
      tap((e) => {
        if (e.type === 'ProgressMessage') write(`  [calculator] ${e.text}\n`);
        if (e.type === 'ToolExecutionUpdate') streamed = e.partialResult.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        if (e.type === 'ToolExecutionEnd') write(`  [calculator] streamed "${streamed}"; result: ${e.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}\n`);
        if (e.type === 'MessageEnd' && e.message.role === 'assistant') {
          const text = e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
          if (text) write(`coordinator › ${text}\n`);
        }
      }),
    ));
    if (end.type !== 'AgentEnd') throw new Error('the run did not end');
    return end;
  } finally {
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
