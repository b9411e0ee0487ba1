// The floor: the least an agent loop can do for this workload, hand-written with async
// generators and no library. The model is the workload's async generator of parts (modelParts); the loop
// assembles the assistant message, parses each tool call's arguments once, checks them, runs the
// tool, appends the result, and yields every event to the consumer.
import {
  PROMPT, SYSTEM_PROMPT, TOOL_NAME, modelParts, newCounts, runAgents, toolOutput,
} from '../workload.mjs';

export const label = 'hand-written async-generator loop (floor)';

export function run(workload) {
  const counts = newCounts();
  return runAgents(workload, counts, () => consume(workload, counts));
}

async function consume(workload, counts) {
  for await (const event of agentLoop(workload, counts)) {
    counts.events++;
    if (event.type === 'textDelta') counts.textDeltas++;
    else if (event.type === 'argDelta') counts.argDeltas++;
    else if (event.type === 'toolEnd') counts.toolExecutions++;
    else if (event.type === 'toolResult') counts.toolResults++;
  }
}

const tools = {
  [TOOL_NAME]: {
    check: (args) => typeof args.path === 'string' && typeof args.line === 'number',
    execute: async (args) => toolOutput(args),
  },
};

async function* agentLoop(workload, counts) {
  const messages = [{ role: 'user', content: PROMPT }];
  let ids = 0;
  const nextId = () => `call_${++ids}`;
  yield { type: 'start', system: SYSTEM_PROMPT };
  for (let turn = 0; turn < workload.turns; turn++) {
    const message = { role: 'assistant', text: '', calls: [] };
    const argText = new Map();
    for await (const event of modelParts(workload, turn, nextId)) {
      if (event.type === 'textDelta') message.text += event.delta;
      else if (event.type === 'toolStart') {
        message.calls.push({ id: event.id, name: event.name, arguments: {} });
        argText.set(event.id, '');
      } else argText.set(event.id, argText.get(event.id) + event.delta);
      yield event;
    }
    for (const call of message.calls) call.arguments = JSON.parse(argText.get(call.id));
    messages.push(message);
    yield { type: 'messageEnd', message };
    if (message.calls.length === 0) break;
    for (const call of message.calls) {
      const tool = tools[call.name];
      yield { type: 'toolStart', call };
      const ok = tool.check(call.arguments);
      if (ok) counts.executed++;
      const output = ok ? await tool.execute(call.arguments) : 'invalid arguments';
      const result = { role: 'toolResult', toolCallId: call.id, content: output, isError: !ok };
      yield { type: 'toolEnd', call, result };
      messages.push(result);
      yield { type: 'toolResult', message: result };
    }
  }
  yield { type: 'end', messages };
}
