/**
 * The react-chat demo's agent: keyless, a scripted model that answers by what it is asked. "weather"
 * calls the `weather` tool, "deploy" calls `deploy` (which needs the user's approval), anything else
 * gets a story streamed slowly (to stop, or to reload in the middle of).
 */
import { z } from 'zod';
import { BasicAgent, defineTool, textOf, type Message } from 'phi-rx';
import { scriptedModel, scriptedProvider, type ScriptedTurn } from 'phi-rx/testing';

export const STORY = 'Once upon a time a stream of events met a reactive page. '.repeat(6).trim();

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny and 21°C in ${city}`,
});

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the app (asks the user first)',
  parameters: z.object({ env: z.string() }),
  needsApproval: true,
  execute: ({ env }) => `Deployed to ${env}`,
});

/** What the scripted model says to a conversation: a tool call for a new question, then the answer from its result. */
function reply(messages: readonly Message[], chunkDelay: number): ScriptedTurn {
  const last = messages[messages.length - 1]!;
  if (last.role === 'toolResult') return { text: `Done: ${textOf(last)}.`, chunkDelay };
  const asked = last.role === 'user' ? textOf(last).toLowerCase() : '';
  if (asked.includes('weather')) return { text: 'Let me check.', toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }], chunkDelay };
  if (asked.includes('deploy')) return { text: 'This needs your approval.', toolCalls: [{ name: 'deploy', arguments: { env: 'production' } }], chunkDelay };
  return { text: STORY, chunkDelay: chunkDelay * 4 };
}

/** A fresh agent for one request (the conversation comes with the request). */
export function demoAgent(options: { chunkDelayMs?: number } = {}): BasicAgent {
  const chunkDelay = options.chunkDelayMs ?? 30;
  const steps = Array.from({ length: 8 }, () => (request: { messages: readonly Message[] }) => reply(request.messages, chunkDelay));
  return new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(steps), retry: false, tools: [weather, deploy], systemPrompt: 'You are a demo.' });
}
