/**
 * A phi-rx agent served to AG-UI clients (CopilotKit, assistant-ui, the AG-UI Dojo): an AG-UI
 * endpoint on a loopback port, and AG-UI's own client (`HttpAgent` of `@ag-ui/client`) talking
 * to it. Three runs: a server tool and the answer; a frontend tool the client runs itself (the run
 * ends with the call pending, the client sends the result next); a tool that waits for approval
 * (the run ends in an AG-UI interrupt, the client resumes it with an approval).
 * The model is scripted, so no API key is needed.
 *
 * Run it with `npm run example examples/ag-ui.ts` (needs `@ag-ui/client` and `@ag-ui/encoder`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { HttpAgent, type Message } from '@ag-ui/client';
import { textOf, type AnyTool, type ToolResultMessage } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';
import { agUiNodeHandler } from 'phi-rx/ag-ui/node';

const weather: AnyTool = {
  name: 'weather',
  label: 'Weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (args) => `${(args as { city: string }).city}: 18 °C, clear`,
};
const book: AnyTool = {
  name: 'bookTable',
  label: 'Book a table',
  description: 'Books a restaurant table (waits for the user to approve)',
  parameters: { type: 'object', properties: { restaurant: { type: 'string' } } },
  needsApproval: true,
  execute: (args) => `booked at ${(args as { restaurant: string }).restaurant}`,
};

// The scripted model: what a real one would answer to these prompts.
const provider = scriptedProvider([
  { toolCalls: [{ name: 'weather', id: 'w1', arguments: { city: 'Paris' } }] },
  { text: 'Paris is clear, 18 °C.' },
  { toolCalls: [{ name: 'pickDate', id: 'd1', arguments: { question: 'Which evening?' } }] },
  (request) => ({ text: `Friday it is (${textOf(request.messages.at(-1) as ToolResultMessage)}).`, toolCalls: [{ name: 'bookTable', id: 'b1', arguments: { restaurant: 'Chez Ada' } }] }),
  (request) => ({ text: `Done: ${textOf(request.messages.at(-1) as ToolResultMessage)}.` }),
]);

export async function main(log: (line: string) => void = console.log): Promise<Message[]> {
  // The server: one AG-UI endpoint. `authorize` is required; a real app checks the caller here.
  const handle = agUiNodeHandler({ config: { model: scriptedModel(), provider }, tools: [weather, book], authorize: 'allow-all' });
  const server = createServer((req, res) => (req.url === '/agent' ? handle(req, res) : void res.writeHead(404).end()));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;

  // The client, as a web app would use it.
  const agent = new HttpAgent({ url, threadId: 'dinner' });
  const show = (from: number) => agent.messages.slice(from).forEach((m) => log(`  ${m.role}: ${describe(m)}`));

  log('run 1: a server tool');
  agent.addMessage({ id: 'u1', role: 'user', content: 'Weather in Paris tonight?' });
  let seen = agent.messages.length;
  await agent.runAgent();
  show(seen);

  log('run 2: a frontend tool, run by the client');
  const pickDate = { name: 'pickDate', description: 'Asks the user for a date', parameters: { type: 'object', properties: { question: { type: 'string' } } } };
  agent.addMessage({ id: 'u2', role: 'user', content: 'Book dinner, ask me which evening.' });
  seen = agent.messages.length;
  let pending: string[] = [];
  await agent.runAgent({ tools: [pickDate] }, { onRunFinishedEvent: (p) => void (pending = p.outcome === 'success' ? p.pendingToolCallIds : []) });
  show(seen);
  log(`  pending for the client: ${pending.join(', ')}`);
  agent.addMessage({ id: 'r2', role: 'tool', toolCallId: pending[0]!, content: 'Friday' });
  seen = agent.messages.length;
  await agent.runAgent({ tools: [pickDate] });
  show(seen);
  log(`  interrupts: ${agent.pendingInterrupts.map((i) => `${i.reason} for ${i.toolCallId}`).join(', ')}`);

  log('run 3: the user approves, the run resumes');
  seen = agent.messages.length;
  await agent.runAgent({ resume: agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })) });
  show(seen);

  server.close();
  server.closeAllConnections(); // the client keeps its connection alive
  return agent.messages;
}

function describe(m: Message): string {
  if (m.role === 'assistant') return [m.content, ...(m.toolCalls ?? []).map((c) => `calls ${c.function.name}(${c.function.arguments})`)].filter(Boolean).join(' ');
  if (m.role === 'tool') return `${m.toolCallId} → ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`;
  return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
