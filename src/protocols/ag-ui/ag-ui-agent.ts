import { Observable } from 'rxjs';
import type { AgUiEvent, AgUiMessage, AgUiRunAgentInput } from './ag-ui-event.js';
import { runAgUi, type AgUiAgentOptions } from './run-ag-ui.js';
import { importOptionalPeer } from '../../util/optional-peer.js';

/** What `AbstractAgent` of `@ag-ui/client` is to this module: a class whose subclasses give `run(input)`. */
export type AbstractAgentClass = abstract new (config?: AgUiAgentConfig) => object;

/** `AbstractAgent`'s constructor options (`@ag-ui/client` `AgentConfig`). */
export interface AgUiAgentConfig {
  agentId?: string;
  description?: string;
  threadId?: string;
  initialMessages?: AgUiMessage[];
  initialState?: unknown;
  debug?: boolean;
}

/** The members of an AG-UI agent this module adds or relies on. */
export interface PhiRxAgUiAgentMembers {
  /** The phi-rx agent this AG-UI agent runs. */
  readonly phiRx: AgUiAgentOptions;
  run(input: AgUiRunAgentInput): Observable<AgUiEvent>;
  /** Aborts the run in progress gracefully: it ends with RUN_FINISHED, `outcome: { type: 'cancelled' }`. */
  abortRun(): void;
}

/** The class {@link phiRxAgUiAgent} makes: `new (phiRx, config?)`, an instance of `Base` and the members above. */
export type PhiRxAgUiAgentClass<B extends AbstractAgentClass> = new (phiRx: AgUiAgentOptions, config?: AgUiAgentConfig) => InstanceType<B> & PhiRxAgUiAgentMembers;

/**
 * An AG-UI agent class that runs a phi-rx agent in-process: a subclass of the `AbstractAgent` you
 * pass (from `@ag-ui/client`, your version), whose `run(input)` is {@link runAgUi}. Everything an
 * AG-UI agent offers works on it: `runAgent()`, subscribers, middleware (`use`), `messages` and
 * `state`, interrupts (`pendingInterrupts`, `runAgent({ resume })`), and `abortRun()`, which
 * aborts the phi-rx run gracefully.
 *
 * @example
 * import { AbstractAgent } from '@ag-ui/client';
 * const PhiRxAgent = phiRxAgUiAgent(AbstractAgent);
 * const agent = new PhiRxAgent({ config: { model, provider } }, { threadId: 't1' });
 * agent.addMessage({ id: 'u1', role: 'user', content: 'Hi' });
 * const { newMessages } = await agent.runAgent();
 */
export function phiRxAgUiAgent<B extends AbstractAgentClass>(Base: B): PhiRxAgUiAgentClass<B> {
  // Not generic here: TypeScript's mixin rule would ask for an `any[]` constructor.
  const Parent = Base as AbstractAgentClass;
  class PhiRxAgUiAgent extends Parent implements PhiRxAgUiAgentMembers {
    private runs = new Set<AbortController>();
    constructor(readonly phiRx: AgUiAgentOptions, config?: AgUiAgentConfig) {
      super(config);
    }

    run(input: AgUiRunAgentInput): Observable<AgUiEvent> {
      return new Observable<AgUiEvent>((subscriber) => {
        const abort = new AbortController();
        this.runs.add(abort);
        const subscription = runAgUi(input, this.phiRx, abort.signal).subscribe(subscriber);
        return () => {
          this.runs.delete(abort);
          // Unsubscribed before its end (the client detached): the run is aborted, not cut off mid-tool.
          if (!subscription.closed) abort.abort();
          subscription.unsubscribe();
        };
      });
    }

    abortRun(): void {
      for (const abort of this.runs) abort.abort();
    }

    /** AbstractAgent's copy, with the phi-rx agent and no runs of its own. */
    clone(): PhiRxAgUiAgent {
      const baseClone = (Parent.prototype as { clone?: (this: object) => object }).clone;
      const copy = (baseClone ? baseClone.call(this) : Object.create(Object.getPrototypeOf(this))) as { phiRx: AgUiAgentOptions; runs: Set<AbortController> };
      copy.phiRx = this.phiRx;
      copy.runs = new Set();
      return copy as unknown as PhiRxAgUiAgent;
    }
  }
  return PhiRxAgUiAgent as unknown as PhiRxAgUiAgentClass<B>;
}

/**
 * {@link phiRxAgUiAgent} with `@ag-ui/client` (an optional peer) imported on first use: an AG-UI
 * agent that runs a phi-rx agent in-process.
 *
 * @example
 * const agent = await createAgUiAgent({ config: { model, provider } }, { threadId: 't1' });
 */
export async function createAgUiAgent(phiRx: AgUiAgentOptions, config?: AgUiAgentConfig): Promise<InstanceType<AbstractAgentClass> & PhiRxAgUiAgentMembers> {
  const { AbstractAgent } = await importOptionalPeer<{ AbstractAgent: AbstractAgentClass }>('@ag-ui/client', 'phi-rx/ag-ui (createAgUiAgent)');
  return new (phiRxAgUiAgent(AbstractAgent))(phiRx, config);
}
