/**
 * Agents as tools that stream: an orchestrator calls two specialists at once; their events reach
 * the orchestrator's stream as they happen (each child loop's AgentStart names the call that
 * started it), `transcript()` shows each child's work under its call, and the structured answer of
 * one specialist (`output`) is its tool result. A scripted provider plays every model.
 */
import { pathToFileURL } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { agentTool, BasicAgent, textOf, type AgentEvent } from 'phi-rx';
import { scriptedModel, scriptedProvider } from 'phi-rx/testing';

const weather = agentTool(
  { name: 'weather', description: 'Forecasts the weather of a city.', model: scriptedModel('weather-model'), provider: scriptedProvider([{ text: '{"city":"Paris","celsius":18}', chunkDelay: 5 }]) },
  { output: z.object({ city: z.string(), celsius: z.number() }) },
);
const packing = agentTool({
  name: 'packing', description: 'Suggests what to pack.', model: scriptedModel('packing-model'),
  provider: scriptedProvider([{ text: 'A light jacket and good shoes.', chunkDelay: 5 }]),
});

/** One prompt to the orchestrator; returns what happened, one line each. */
export async function agentToolDemo(): Promise<string[]> {
  const agent = new BasicAgent({
    model: scriptedModel('orchestrator'),
    provider: scriptedProvider([
      { toolCalls: [{ name: 'weather', arguments: { task: 'Paris tomorrow' } }, { name: 'packing', arguments: { task: 'Paris, mild evening' } }] },
      { text: 'Paris will be 18°C: take a light jacket and good shoes.' },
    ]),
    tools: [weather, packing],
  });
  const lines: string[] = [];
  const children = new Map<string, string>(); // child loop id → the tool call's name
  let deltas = ''; // which child each streamed delta came from, in the order they arrived
  const say = (e: AgentEvent): void => {
    if (e.type === 'MessageUpdate' && children.has(e.loopId)) deltas += children.get(e.loopId)![0];
    if (e.type === 'AgentStart' && e.parentToolCallId) children.set(e.loopId, agent.state.toolCalls.find((t) => t.id === e.parentToolCallId)?.name ?? '?');
    if (e.type === 'MessageEnd' && e.message.role === 'assistant' && children.has(e.loopId)) lines.push(`[${children.get(e.loopId)}] ${textOf(e.message as never)}`);
    if (e.type === 'ToolExecutionEnd' && !children.has(e.loopId)) lines.push(`${e.toolName} → ${textOf(e.result)}`);
  };
  await lastValueFrom(agent.prompt('Weekend in Paris: what do I need?').pipe(tap(say), toArray()));
  lines.push(`streamed side by side: ${/^(?=.*w.*p.*w)(?=.*p.*w.*p)/.test(deltas)} (${deltas.length} deltas)`);
  for (const call of agent.state.toolCalls) lines.push(`transcript: ${call.name} → child ${call.child?.status}, ${call.child?.messages.length} messages`);
  lines.push(`› ${textOf(agent.messages.at(-1) as never)}`);
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const line of await agentToolDemo()) console.log(line);
}
