import type { Subscription } from 'rxjs';
import type { SteeringCheck } from './dispatch-tools.js';

/**
 * Which running tool calls steering interrupts, for one dispatch: each call registers a callback
 * (`watch`), and one subscription to `steering.arrivals$`, held while any call is registered,
 * tells them all when a message with the `interrupt` policy arrives. Steering already queued when
 * a call starts counts as arrived: with the `interrupt` policy the call is cut at once.
 * (The callback form of a shared `arrivals$` Observable, without a subscriber per call.)
 */
export class SteeringInterrupts {
  private readonly cuts = new Set<() => void>();
  private arrivals: Subscription | undefined;

  constructor(private readonly steering: SteeringCheck) {}

  /** Calls `cut` when steering interrupts (at once, if queued steering already does); returns what stops watching. */
  readonly watch = (cut: () => void): (() => void) => {
    const steering = this.steering;
    if (steering.pending()) {
      if (steering.policy() === 'interrupt') cut();
      return noop;
    }
    this.cuts.add(cut);
    this.arrivals ??= steering.arrivals$.subscribe(() => this.arrived());
    return () => this.stop(cut);
  };

  private arrived(): void {
    if (this.steering.policy() !== 'interrupt') return;
    for (const cut of [...this.cuts]) cut();
  }

  private stop(cut: () => void): void {
    this.cuts.delete(cut);
    if (this.cuts.size > 0 || !this.arrivals) return;
    const arrivals = this.arrivals;
    this.arrivals = undefined;
    arrivals.unsubscribe();
  }
}

const noop = (): void => undefined;
