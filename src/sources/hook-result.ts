import { defaultIfEmpty, defer, from, isObservable, Observable, of, take } from 'rxjs';
import type { HookResult } from '../types/hooks.js';

function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** A hook's answer as an Observable of exactly one value (`undefined` if an Observable says nothing). */
export function fromHookResult<T>(result: HookResult<T>): Observable<T | undefined> {
  if (isObservable(result)) return (result as Observable<T>).pipe(take(1), defaultIfEmpty(undefined));
  if (isThenable<T>(result)) return from(result);
  return of(result as T);
}

/** True when the answer is available now, so callers can skip building an Observable on hot paths. */
export function isSyncResult<T>(result: HookResult<T>): result is T {
  return !isObservable(result) && !isThenable(result);
}

/**
 * Calls a hook or policy. A throw or a failed Promise/Observable is handed to `onError` and read
 * as `fallback`, so a broken hook is reported and the loop goes on ("treated as Continue").
 * An answer of `undefined` also reads as `fallback`.
 */
export function callHookSafely<T>(call: () => HookResult<T | void>, fallback: T, onError: (e: unknown) => void): Observable<T> {
  // Lazy: the hook runs when its stage is reached, not when the pipeline is assembled.
  return defer(() => invokeHook(call, fallback, onError));
}

function invokeHook<T>(call: () => HookResult<T | void>, fallback: T, onError: (e: unknown) => void): Observable<T> {
  let result: HookResult<T | void>;
  try {
    result = call();
  } catch (e) {
    onError(e);
    return of(fallback);
  }
  if (isSyncResult(result)) return of((result ?? fallback) as T);
  return new Observable<T>((sub) =>
    fromHookResult(result).subscribe({
      next: (v) => sub.next((v ?? fallback) as T),
      error: (e: unknown) => {
        onError(e);
        sub.next(fallback);
        sub.complete();
      },
      complete: () => sub.complete(),
    }),
  );
}
