/** What Ctrl-C does: the first press aborts the run gracefully, the second exits at once. */
export interface InterruptActions {
  abort(): void;
  exit(): void;
  notice(text: string): void;
}

/** A SIGINT handler with the two-press behaviour. */
export function interruptHandler(actions: InterruptActions): () => void {
  let presses = 0;
  return () => {
    presses++;
    if (presses === 1) {
      actions.notice('Aborting the run… (Ctrl-C again to exit now)');
      actions.abort();
    } else {
      actions.notice('Exiting.');
      actions.exit();
    }
  };
}
