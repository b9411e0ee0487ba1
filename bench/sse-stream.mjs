// Builds the SSE benchmark's body at run time from a recorded Anthropic stream (the fixtures are
// third-party data and are never copied into the repository): the recording's content blocks are
// repeated, with their indices shifted, until the body is about 1 MiB, between the recording's own
// message_start and its message_delta / message_stop. Every byte is the API's own framing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FIXTURES = process.env.PHI_RX_FIXTURES ?? path.resolve(root, '../shared/fixtures');
export const RECORDING = 'providers/anthropic/pydantic-ai__thinking_part_stream.sse';
const TARGET_BYTES = 1024 * 1024;

export function recordingPath() {
  return path.join(FIXTURES, RECORDING);
}

export function hasRecording() {
  return existsSync(recordingPath());
}

/** The body, and what a reader of it must see. */
export function buildStream() {
  const text = readFileSync(recordingPath(), 'utf8');
  const events = text.split(/\r?\n\r?\n/).filter((block) => block.trim() !== '');
  const typeOf = (block) => /"type"\s*:\s*"([a-z_]+)"/.exec(block)?.[1];
  const start = events.findIndex((b) => typeOf(b) === 'message_start');
  const end = events.findIndex((b) => typeOf(b) === 'message_delta');
  const head = events.slice(0, start + 1);
  const body = events.slice(start + 1, end);
  const tail = events.slice(end);
  const blocks = new Set(body.map((b) => /"index"\s*:\s*(\d+)/.exec(b)?.[1]).filter(Boolean)).size;
  const bodyBytes = Buffer.byteLength(`${body.join('\n\n')}\n\n`);
  const fixed = Buffer.byteLength(`${[...head, ...tail].join('\n\n')}\n\n`);
  const copies = Math.max(1, Math.ceil((TARGET_BYTES - fixed) / bodyBytes));
  const out = [...head];
  for (let copy = 0; copy < copies; copy++) {
    for (const block of body) out.push(block.replace(/"index"\s*:\s*(\d+)/, (_m, i) => `"index":${Number(i) + copy * blocks}`));
  }
  out.push(...tail);
  const sse = `${out.join('\n\n')}\n\n`;
  const count = (kind) => body.filter((b) => new RegExp(`"type"\\s*:\\s*"${kind}"`).test(b)).length * copies;
  return {
    bytes: Buffer.from(sse, 'utf8'),
    copies,
    sseEvents: out.length,
    textDeltas: count('text_delta'),
    thinkingDeltas: count('thinking_delta'),
  };
}
