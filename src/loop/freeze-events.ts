import type { AgentEvent } from '../types/events.js';

/**
 * Whether emitted events are deep-frozen (`PHI_RX_FREEZE=1`): a development check that nothing
 * reachable from an event changes after it went out (a stage that changed a message in place then
 * throws a TypeError where it does). Read once, when the module loads, and browser-safe (no
 * `process` in a browser: off). Off, it costs one constant check per event.
 */
export const FREEZE_EVENTS: boolean = freezeRequested((globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.PHI_RX_FREEZE);

function freezeRequested(value: string | undefined): boolean {
  return value === '1' || value === 'true';
}

/** The objects already frozen whole (an event's messages are shared by later events and states). */
const frozen = new WeakSet<object>();

/**
 * Freezes `event` and every plain object and array reachable from it, and returns it. Instances
 * of classes (errors, signals, typed arrays) are left as they are: they are not the loop's data.
 */
export function deepFreeze<T extends AgentEvent>(event: T): T {
  freezeValue(event);
  return event;
}

function freezeValue(value: unknown): void {
  if (typeof value !== 'object' || value === null || frozen.has(value) || !isPlain(value)) return;
  frozen.add(value);
  Object.freeze(value);
  for (const key of Object.keys(value)) freezeValue((value as Record<string, unknown>)[key]);
}

function isPlain(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
