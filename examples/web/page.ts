/**
 * The web demo's page, plain TypeScript bundled with esbuild: one run's events arrive with
 * `fromEventStream` (which reconnects and resumes on its own), `transcript()` folds them into
 * view state, `latestPerFrame()` renders at most once per animation frame.
 */
/// <reference lib="dom" />
// As in the other examples, the package is imported from its sources ('phi-rx' and 'phi-rx/transport' in your app).
import { latestPerFrame, transcript, type AgentMessage, type Transcript } from '../../src/index.js';
import { fromEventStream, runCommands, type RunCommands } from '../../src/protocols/transport/index.js';
import type { Subscription } from 'rxjs';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
let subscription: Subscription | undefined;
let commands: RunCommands | undefined;

$('prompt-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const response = await fetch('/api/prompt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: $<HTMLInputElement>('prompt').value }) });
  const { runId } = (await response.json()) as { runId: string };
  subscription?.unsubscribe();
  commands = runCommands(`/api/runs/${runId}/commands`);
  subscription = fromEventStream(`/api/runs/${runId}/events`, { retryDelayMs: 200 })
    .pipe(transcript(), latestPerFrame())
    .subscribe({ next: render, error: (e: Error) => showError(e.message) });
});

$('steer-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $<HTMLInputElement>('steer');
  if (input.value.trim()) void commands?.steer(input.value).then(() => (input.value = ''), (e: Error) => showError(e.message));
});
$('abort').addEventListener('click', () => void commands?.abort().catch((e: Error) => showError(e.message)));

function render(view: Transcript): void {
  const status = $('status');
  status.dataset['status'] = view.status;
  status.textContent = view.status === 'ended' ? `ended: ${view.stopReason}` : view.status;
  $('usage').textContent = view.usage.totalTokens ? `${view.usage.totalTokens} tokens` : '';
  const running = view.status === 'running';
  $<HTMLButtonElement>('steer-send').disabled = !running;
  $<HTMLButtonElement>('abort').disabled = !running;
  const box = $('transcript');
  box.replaceChildren(...view.messages.flatMap((m) => messageNodes(m, view)), ...(view.streaming ? [bubble('assistant streaming', textOf(view.streaming))] : []));
}

function messageNodes(message: AgentMessage, view: Transcript): HTMLElement[] {
  if (!('role' in message)) return [];
  if (message.role === 'user') return [bubble('user', textOf(message))];
  if (message.role === 'assistant') {
    const calls = message.content.flatMap((c) => (c.type === 'toolCall' ? [view.toolCalls.find((t) => t.id === c.id)] : []));
    const text = textOf(message);
    return [...(text ? [bubble('assistant', text)] : []), ...calls.flatMap((t) => (t ? [toolNode(t)] : []))];
  }
  return [];
}

function toolNode(tool: Transcript['toolCalls'][number]): HTMLElement {
  const node = el('div', 'tool');
  node.dataset['status'] = tool.status;
  node.dataset['tool'] = tool.name;
  node.append(el('div', 'name', `tool ${tool.name}(${JSON.stringify(tool.args)})`), ...tool.progress.map((p) => el('div', 'progress', `… ${p}`)));
  if (tool.result) node.append(el('div', 'result', tool.result.content.map((c) => (c.type === 'text' ? c.text : '[image]')).join('')));
  return node;
}

function textOf(message: { content: ReadonlyArray<{ type: string; text?: string }> }): string {
  return message.content.map((c) => (c.type === 'text' ? c.text ?? '' : '')).join('');
}

function bubble(kind: string, text: string): HTMLElement {
  return el('div', `msg ${kind}`, text);
}

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showError(message: string): void {
  $('transcript').append(el('div', 'msg error', `Error: ${message}`));
}
