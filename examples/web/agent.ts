/**
 * The agent behind the web demo: a `research` tool that reports progress, on the scripted
 * provider (no key needed) or, when a key is set (see examples/models.ts), a real model.
 */
import { interval, map, take, concat, of } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, toolProgress, type AgentMessage } from '../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import { liveModel } from '../models.js';

export interface DemoAgentOptions {
  /** Ms between streamed deltas of the scripted replies (default 40). */
  chunkDelayMs?: number;
  /** Ms between the research tool's progress lines (default 250). */
  progressMs?: number;
  /** Use the scripted provider even when a key is set. */
  scripted?: boolean;
  env?: Record<string, string | undefined>;
}

export const FINAL_REPLY =
  'Here is what I found: RxJS models every step of an agent run as an Observable, so a page can ' +
  'subscribe to the events, fold them into a transcript and render each frame; steering, aborts and ' +
  'reconnects are just more events on the same stream.';

const research = (progressMs: number) =>
  defineTool({
    name: 'research',
    description: 'Looks a topic up and reports progress as it goes',
    parameters: z.object({ topic: z.string() }),
    execute: ({ topic }) =>
      concat(
        interval(progressMs).pipe(
          take(3),
          map((i) => toolProgress(`${['searching', 'reading', 'summarising'][i]} ${topic}`)),
        ),
        of(`Notes on ${topic}: events, operators, schedulers.`),
      ),
  });

const lastUserText = (messages: readonly AgentMessage[]): string => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if ('role' in m && m.role === 'user') return m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  }
  return '';
};

/**
 * A scripted conversation: look the topic up, then answer; a steering message is acknowledged.
 * A steer that lands during an answer gets one more answer (up to eight).
 */
function script(chunkDelay: number): ScriptStep[] {
  const answer: ScriptStep = (request) => {
    const users = request.messages.filter((m) => 'role' in m && m.role === 'user');
    const steered = users.length > 1 ? `You also said: "${lastUserText(request.messages)}". ` : '';
    return { text: steered + FINAL_REPLY, chunkDelay };
  };
  return [
    (request) => ({ text: 'Let me research that.', toolCalls: [{ name: 'research', arguments: { topic: lastUserText(request.messages).slice(0, 40) } }], chunkDelay }),
    ...Array.from({ length: 8 }, () => answer),
  ];
}

/** A fresh agent for one prompt. */
export function demoAgent(options: DemoAgentOptions = {}): BasicAgent {
  const live = options.scripted ? undefined : liveModel(options.env ?? process.env);
  const model = live ?? scriptedModel();
  const agent = new BasicAgent({
    model,
    systemPrompt: 'You are a research assistant. Use the research tool once, then answer in two sentences.',
    ...(live ? {} : { provider: scriptedProvider(script(options.chunkDelayMs ?? 40), { chunkSize: 4 }) }),
  });
  return agent.withTools(research(options.progressMs ?? 250));
}
