/**
 * A coordinator that delegates research to a sub-agent. The child runs its own loop (own ids,
 * own tools, a turn limit); its text streams to the parent as tool updates, and a session
 * recorder fed with both streams links the two sessions.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, defineTool, subAgentTool, userMessage, type AgentEvent } from 'phi-rx';
import { recordSession, SessionRecorder, type Session } from 'phi-rx/session';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const lookupPopulation = defineTool({
  name: 'population',
  description: 'Population of a city, in millions',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ Tokyo: '37.4', Delhi: '32.9' })[city] ?? 'unknown',
});

export async function main(write: (s: string) => void = (s) => process.stdout.write(s)): Promise<{ parent: AgentEvent[]; sessions: Session[] }> {
  const recorder = new SessionRecorder();
  const researcher = subAgentTool({
    name: 'researcher',
    description: 'Answers factual questions using the population tool',
    model: scriptedModel('researcher-model'),
    provider: scriptedProvider([
      { toolCalls: [{ name: 'population', arguments: { city: 'Tokyo' } }, { name: 'population', arguments: { city: 'Delhi' } }] },
      { text: 'Tokyo has 37.4 million people, Delhi 32.9 million.' },
    ]),
    systemPrompt: 'You research facts. Use your tools.',
    tools: [lookupPopulation],
    maxTurns: 5,
    onEvent: (e) => recorder.onEvent(e), // the child's own stream, recorded alongside the parent's
  });
  const coordinator = scriptedProvider([
    { text: 'Let me ask the researcher.', toolCalls: [{ name: 'researcher', arguments: { task: 'Compare the populations of Tokyo and Delhi.' } }] },
    { text: 'Tokyo is larger, by about 4.5 million people.' },
  ]);
  const parent = await lastValueFrom(
    agentLoop([userMessage('Which is bigger, Tokyo or Delhi?')], { systemPrompt: 'You coordinate.', messages: [], tools: [researcher] }, { model: scriptedModel(), provider: coordinator }).pipe(
      recordSession(recorder),
      tap((e) => {
        if (e.type === 'ToolExecutionUpdate') write(`  [researcher] ${e.partialResult.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}\n`);
        if (e.type === 'ToolExecutionEnd') write(`  researcher → ${e.result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')} (child loop ${e.childLoopId})\n`);
        if (e.type === 'MessageEnd' && e.message.role === 'assistant') write(`coordinator › ${e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}\n`);
      }),
      toArray(),
    ),
  );
  recorder.flush();
  return { parent, sessions: recorder.drainCompleted() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
