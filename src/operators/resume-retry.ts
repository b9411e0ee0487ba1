import { Observable, type OperatorFunction } from 'rxjs';
import type { AssistantMessage } from '../types/message.js';
import type { StreamEvent } from '../types/provider.js';
import { RetryResumer } from './internal/retry-resumer.js';
import type { AttemptMark } from './mark-attempt.js';

/** "Discard what was rendered of the streaming message; continue from `message`." */
export interface StreamReset {
  type: 'reset';
  message: AssistantMessage;
  reason: 'retryDiverged';
}

/**
 * Makes a retried model call continue where the failed attempt broke, instead of streaming the
 * whole message again after what was already shown. Each new attempt's output is matched against
 * what earlier attempts emitted: the identical prefix is swallowed (whatever the chunking) and the
 * stream continues with the first new character. When the new attempt diverges (different text,
 * another tool-call id, a shorter answer), a {@link StreamReset} is emitted whose message holds the
 * content both attempts share up to the divergence (normally nothing), followed by the new
 * attempt's output from there; `toMessageEvents` makes it a `MessageReset` event.
 *
 * ```
 * source:  (M s "Hel" "lo wo") # (M s "Hello" " world" d)   (M: AttemptMark, # retried)
 * resumeRetry()
 * output:  (s "Hel" "lo wo")     (s "rld" d)                 (the repeated "Hello wo" swallowed)
 *
 * source:  (M s "Hello") #  (M s "Howdy" d)
 * resumeRetry()
 * output:  (s "Hello")      (s R "owdy" d)                   (R: reset to "H", then what differs)
 * ```
 *
 * @example
 * provider(request, options).pipe(markAttempt(), retryBackoff(), resumeRetry(), toMessageEvents({ loopId, now }));
 */
export function resumeRetry(): OperatorFunction<StreamEvent | AttemptMark, StreamEvent | StreamReset> {
  return (source) =>
    new Observable<StreamEvent | StreamReset>((subscriber) => {
      const resume = new RetryResumer({ push: (e) => subscriber.next(e) });
      return source.subscribe({
        next: (e) => {
          if (e.type === 'attempt') resume.attempt();
          else if (resume.passes(e)) subscriber.next(e);
          else resume.push(e);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
