import { Observable } from 'rxjs';
import { messageChecks } from '../types/message-checks.js';
import { runCheck } from '../types/json-check.js';
import type { AgentMessage } from '../types/message.js';
import type { SteeringPolicy } from '../types/config.js';
import { checkStreamId, entriesOfXRead, type RedisCommander, type StreamEntry } from './commands.js';

/** What a web process sends back to the worker running an agent. */
export type RunControl =
  | { readonly kind: 'steer'; readonly message: string | AgentMessage; readonly policy?: SteeringPolicy }
  | { readonly kind: 'followUp'; readonly message: string | AgentMessage }
  | { readonly kind: 'abort'; readonly reason?: string };

/** A control message read back, with its stream id (to resume after, e.g. when another worker takes the run over). */
export interface StreamedControl {
  readonly id: string;
  readonly control: RunControl;
}

/** The part of BasicAgent a control stream drives. */
export interface ControllableAgent {
  steer(message: string | AgentMessage, policy?: SteeringPolicy): void;
  followUp(message: string | AgentMessage): void;
  abort(reason?: unknown): void;
}

/** The control stream of a run's event stream: `<streamKey>:control`. */
export const controlKeyOf = (streamKey: string): string => `${streamKey}:control`;

/**
 * Sends steering, a follow-up or an abort to the worker running the run on `streamKey` (an
 * `XADD` to `<streamKey>:control`, bounded to `maxLen` entries). Resolves with the entry id.
 * Throws a TypeError naming the field when the control is malformed, before sending anything.
 *
 * @example
 * await sendRunControl(redis, `run:${runId}`, { kind: 'steer', message: 'Use metric units.' });
 */
export async function sendRunControl(client: RedisCommander, streamKey: string, control: RunControl, maxLen = 1000): Promise<string> {
  const checked = checkControl(control, 'sendRunControl');
  const id = await client.sendCommand(['XADD', controlKeyOf(streamKey), 'MAXLEN', '~', String(maxLen), '*', 'data', JSON.stringify(checked)]);
  return String(id);
}

/**
 * The control messages sent to a run, read with `XREAD BLOCK` after `after` (default `'0'`: all of
 * them, so nothing sent before the worker listened is lost). Never completes: unsubscribe when
 * the run ends. A malformed entry errors the stream with a TypeError naming the entry and field.
 * Holds its connection while blocked: give it one of its own.
 *
 * ```
 * control:  --s----a
 * readRunControl(reader, 'run:1')
 * result:   --s----a---
 * ```
 *
 * @example
 * const controls = readRunControl(reader, `run:${runId}`).subscribe(({ control }) => applyRunControl(agent, control));
 */
export function readRunControl(client: RedisCommander, streamKey: string, options: { after?: string; blockMs?: number } = {}): Observable<StreamedControl> {
  const key = controlKeyOf(streamKey);
  const after = checkStreamId(options.after ?? '0', `readRunControl("${streamKey}") after`);
  const blockMs = String(options.blockMs ?? 1000);
  return new Observable<StreamedControl>((subscriber) => {
    let last = after;
    const loop = async (): Promise<void> => {
      while (!subscriber.closed) {
        const reply = await client.sendCommand(['XREAD', 'COUNT', '100', 'BLOCK', blockMs, 'STREAMS', key, last]);
        for (const entry of entriesOfXRead(reply, key)) {
          if (subscriber.closed) return;
          last = entry.id;
          subscriber.next({ id: entry.id, control: decodeControl(key, entry) });
        }
      }
    };
    loop().catch((e: unknown) => subscriber.error(e));
  });
}

/** Hands one control message to the agent: `steer`, `followUp` or `abort`. */
export function applyRunControl(agent: ControllableAgent, control: RunControl): void {
  if (control.kind === 'steer') agent.steer(control.message, control.policy);
  else if (control.kind === 'followUp') agent.followUp(control.message);
  else agent.abort(control.reason);
}

function decodeControl(key: string, entry: StreamEntry): RunControl {
  const where = `Redis stream "${key}" entry ${entry.id}`;
  let raw: unknown;
  try {
    raw = JSON.parse(entry.fields['data'] ?? '');
  } catch (e) {
    throw new TypeError(`${where}: data is not JSON (${(e as Error).message})`);
  }
  return checkControl(raw, where);
}

const POLICIES: readonly string[] = ['wait', 'skip', 'interrupt'] satisfies SteeringPolicy[];

function checkControl(raw: unknown, where: string): RunControl {
  const control = raw as { kind?: unknown; message?: unknown; policy?: unknown; reason?: unknown } | null;
  if (typeof control !== 'object' || control === null) throw new TypeError(`${where}: a control must be an object`);
  const { kind } = control;
  if (kind === 'abort') {
    if (control.reason !== undefined && typeof control.reason !== 'string') throw new TypeError(`${where}: control.reason must be a string`);
    return control.reason === undefined ? { kind } : { kind, reason: control.reason };
  }
  if (kind !== 'steer' && kind !== 'followUp') {
    throw new TypeError(`${where}: control.kind must be "steer", "followUp" or "abort", got ${JSON.stringify(kind)}`);
  }
  const message = checkMessage(control.message, where);
  if (kind === 'followUp') return { kind, message };
  if (control.policy !== undefined && !POLICIES.includes(control.policy as string)) {
    throw new TypeError(`${where}: control.policy must be one of ${POLICIES.join(', ')}, got ${JSON.stringify(control.policy)}`);
  }
  return control.policy === undefined ? { kind, message } : { kind, message, policy: control.policy as SteeringPolicy };
}

function checkMessage(message: unknown, where: string): string | AgentMessage {
  if (typeof message === 'string') return message;
  const checked = runCheck(messageChecks().agentMessage, message, 'control.message');
  if (!checked.ok) throw new TypeError(`${where}: ${checked.message}`);
  return checked.value;
}
