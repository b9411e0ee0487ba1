// `npm run bench:memory`: what one conversation holds on the heap, idle and mid-stream.
//
//   node bench/agent-memory.mjs [--agents 500] [--json] [--only floor,phi-definition,phi-basic-agent,pi-agent]
//
// Each contender runs in its own process (`--expose-gc`): it makes `agents` conversations, runs each
// through 25 turns of 20 text deltas and one tool call (a conversation of 50 messages: the prompt,
// 25 assistant messages, 24 tool results) and keeps them; then every conversation takes one more
// prompt and is stopped halfway through the answer's stream (25 of 50 deltas), all at once. The
// heap after full GCs, before / idle / mid-stream, divided by the number of conversations, is the
// heap a conversation holds (V8's `heapUsed`: the live objects a heap snapshot would list), next to
// the floor (the same messages in a plain array, its generator paused mid-stream) and pi-agent-core's
// `Agent`. Uses the bundle `npm run bench` builds (`.tmp/bench/phi-rx.mjs`; built first when absent).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const WORKLOAD = { turns: 25, deltas: 20, tools: 1 };
const MID_DELTAS = 25;
const CONTENDERS = {
  floor: 'floor (plain messages, a paused generator)',
  'phi-definition': 'phi-rx defineAgent session (recorded)',
  'phi-basic-agent': 'phi-rx BasicAgent (recorded)',
  'pi-agent': 'pi-agent-core Agent',
};


async function main() {
  const agents = Number(option('--agents', 500));
  const only = option('--only')?.split(',') ?? Object.keys(CONTENDERS);
  if (!existsSync(path.join(root, '.tmp', 'bench', 'phi-rx.mjs')) || argv.includes('--build')) {
    execFileSync(process.execPath, [path.join(benchDir, 'run.mjs'), '--build-only'], { stdio: ['ignore', 2, 2] });
  }
  const rows = [];
  for (const id of only) {
    process.stderr.write(`memory: ${id} x ${agents} ...\n`);
    const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', id, String(agents)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 2] });
    rows.push(JSON.parse(out.trim().split('\n').pop()));
  }
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ node: process.version, agents, workload: WORKLOAD, rows }, null, 2));
    return;
  }
  const floor = rows.find((r) => r.id === 'floor');
  console.log(`**Heap per conversation** — ${agents} conversations of 50 messages (25 turns of ${WORKLOAD.deltas} deltas and one tool call), then each mid-stream (${MID_DELTAS} of 50 deltas of its next answer); V8 heapUsed after full GCs, per conversation`);
  console.log('');
  console.log('| contender | idle, KB | idle over the floor, KB | mid-stream, KB more | peak RSS |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const over = floor ? (r.idleKb - floor.idleKb).toFixed(1) : '';
    console.log(`| ${CONTENDERS[r.id]} | ${r.idleKb.toFixed(1)} | ${over} | ${r.midKb.toFixed(1)} | ${(r.peakRss / 2 ** 20).toFixed(0)} MB |`);
  }
}

function heap() {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
}

async function child(id, agents) {
  const make = await contender(id);
  const before = heap();
  const conversations = [];
  for (let i = 0; i < agents; i++) conversations.push(make());
  await Promise.all(conversations.map((c) => c.play()));
  const idle = heap();
  resetMidway(agents);
  const paused = conversations.map((c) => c.pause());
  await midway.all;
  const mid = heap();
  midway.open();
  await Promise.all(paused);
  console.log(JSON.stringify({ id, agents, idleKb: (idle - before) / agents / 1024, midKb: (mid - idle) / agents / 1024, peakRss: process.resourceUsage().maxRSS * 1024 }));
}

/** Where every stream waits, mid-answer, until all have arrived and the heap is measured. */
const midway = { arrived: 0, expected: Infinity, all: undefined, reachedAll: undefined, open: undefined, opened: undefined };

function resetMidway(expected) {
  midway.arrived = 0;
  midway.expected = expected;
  midway.all = new Promise((resolve) => (midway.reachedAll = resolve));
  midway.opened = new Promise((resolve) => (midway.open = resolve));
}

/** A stream's stop halfway: resolves when the heap has been measured. */
function waitMidway() {
  if (++midway.arrived === midway.expected) midway.reachedAll();
  return midway.opened;
}

async function contender(id) {
  const w = await import('./workload.mjs');
  if (id === 'floor') return () => floorConversation(w);
  if (id === 'pi-agent') return await piConversation(w);
  const phi = await import(pathToFileURL(path.join(root, '.tmp', 'bench', 'phi-rx.mjs')).href);
  const tool = phi.defineTool({
    name: w.TOOL_NAME, description: w.TOOL_DESCRIPTION, parameters: phi.z.object({ path: phi.z.string(), line: phi.z.number() }), execute: (args) => w.toolOutput(args),
  });
  // The workload's turns, then (the conversation's next prompt) an answer that waits at its session's gate halfway.
  const provider = (request) => new phi.Observable((subscriber) => {
    let turn = 0;
    for (const m of request.messages) if (m.role === 'assistant') turn++;
    const builder = new phi.AssistantMessageBuilder(request.model.id, request.model.provider, Date.now());
    let ids = 0;
    const parts = turn < WORKLOAD.turns ? w.modelParts(WORKLOAD, turn, () => `call_${turn}_${++ids}`) : undefined;
    (async () => {
      subscriber.next(builder.start());
      if (parts) {
        for await (const part of parts) {
          if (part.type === 'textDelta') subscriber.next(builder.text(part.delta));
          else if (part.type === 'toolStart') subscriber.next(builder.toolCallStart(part.id, part.name, part.id));
          else subscriber.next(builder.toolCallDelta(part.delta, part.id));
        }
      } else {
        for (let i = 0; i < 50; i++) {
          if (i === MID_DELTAS) await waitMidway();
          await undefined;
          subscriber.next(builder.text(w.DELTA_TEXT));
        }
      }
      subscriber.next(builder.finish(builder.hasToolCalls() ? 'toolUse' : 'stop'));
      subscriber.complete();
    })().catch((error) => subscriber.error(error));
  });
  const model = phi.scriptedModel();
  const options = { model, provider, systemPrompt: w.SYSTEM_PROMPT, tools: [tool] };
  const definition = id === 'phi-definition' ? phi.defineAgent(options) : undefined;
  return () => {
    const agent = definition ? definition.session() : new phi.BasicAgent(options);
    const recorder = new phi.SessionRecorder();
    const run = (prompt) => new Promise((resolve, reject) => agent.prompt(prompt).pipe(phi.recordSession(recorder)).subscribe({ error: reject, complete: resolve }));
    return {
      play: () => run(w.PROMPT),
      pause: () => run('More.'),
    };
  };
}

function floorConversation(w) {
  const messages = [];
  return {
    play: async () => {
      messages.push({ role: 'user', content: w.PROMPT });
      let ids = 0;
      for (let turn = 0; turn < WORKLOAD.turns; turn++) {
        const message = { role: 'assistant', text: '', calls: [] };
        const args = new Map();
        for await (const part of w.modelParts(WORKLOAD, turn, () => `call_${++ids}`)) {
          if (part.type === 'textDelta') message.text += part.delta;
          else if (part.type === 'toolStart') message.calls.push({ id: part.id, name: part.name, arguments: args.set(part.id, '') && {} });
          else args.set(part.id, args.get(part.id) + part.delta);
        }
        for (const call of message.calls) call.arguments = JSON.parse(args.get(call.id));
        messages.push(message);
        for (const call of message.calls) messages.push({ role: 'toolResult', toolCallId: call.id, content: w.toolOutput(call.arguments), isError: false });
      }
    },
    pause: async () => {
      messages.push({ role: 'user', content: 'More.' });
      const message = { role: 'assistant', text: '', calls: [] };
      for (let i = 0; i < 50; i++) {
        if (i === MID_DELTAS) await waitMidway();
        await undefined;
        message.text += w.DELTA_TEXT;
      }
      messages.push(message);
    },
  };
}

async function piConversation(w) {
  const { Agent } = await import('@mariozechner/pi-agent-core');
  const pi = await import('./contenders/pi-agent-core.mjs');
  const tools = [pi.lookupTool({ executed: 0 })];
  return () => {
    const played = pi.scriptedStream(WORKLOAD);
    let turns = 0;
    const streamFn = (model, context, options) => {
      if (turns++ < WORKLOAD.turns) return played(model, context, options);
      return pi.pausedStream(model, MID_DELTAS, 50, waitMidway);
    };
    const agent = new Agent({ initialState: { systemPrompt: w.SYSTEM_PROMPT, model: pi.MODEL, tools }, convertToLlm: pi.convertToLlm, streamFn });
    return {
      play: () => agent.prompt(w.PROMPT),
      pause: () => agent.prompt('More.'),
    };
  };
}

if (argv[0] === '--child') await child(argv[1], Number(argv[2]));
else await main();
