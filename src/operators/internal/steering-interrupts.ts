import type { SteeringCheck } from '../dispatch-tools.js';
import { listenTo } from '../../sources/broadcast.js';
import { removeOne } from '../../util/remove-one.js';

/**
 * Which running tool calls steering interrupts, for one dispatch: each call registers a callback
 * (`watch`), and one listener on `steering.arrivals$` (`listenTo`: a queue's arrivals are a
 * `Broadcast`), held while any call is registered, tells them all when a message with the
 * `interrupt` policy arrives. Steering already queued when a call starts counts as arrived: with
 * the `interrupt` policy the call is cut at once. (The callback form of a shared `arrivals$`
 * Observable, without a subscriber per call.)
 */
export class SteeringInterrupts {
  /** The running calls' callbacks, changed in place (see {@link removeOne}). */
  private readonly cuts: Array<() => void> = [];
  /** What stops listening for arrivals, while listening. */
  private stopListening: (() => void) | undefined;

  constructor(private readonly steering: SteeringCheck) {}

  /** Calls `cut` when steering interrupts (at once, if queued steering already does); returns what stops watching. */
  readonly watch = (cut: () => void): (() => void) => {
    const steering = this.steering;
    if (steering.pending()) {
      if (steering.policy() === 'interrupt') cut();
      return noop;
    }
    this.cuts.push(cut);
    this.stopListening ??= listenTo(steering.arrivals$, this.arrived);
    return () => this.stop(cut);
  };

  private readonly arrived = (): void => {
    if (this.steering.policy() !== 'interrupt') return;
    for (const cut of this.cuts.slice()) cut();
  };

  private stop(cut: () => void): void {
    removeOne(this.cuts, cut);
    const stopListening = this.stopListening;
    if (this.cuts.length > 0 || !stopListening) return;
    this.stopListening = undefined;
    stopListening();
  }
}

const noop = (): void => undefined;
