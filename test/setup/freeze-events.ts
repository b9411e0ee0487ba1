// Every test file runs with the development check on: the loop deep-freezes each event it emits, so
// that a stage changing an emitted object in place fails the test that reaches it (see
// src/agent/freeze-events.ts). Set before any source module loads (the check is read once, at load);
// child processes the tests start (examples, the CLI) inherit it. `PHI_RX_FREEZE=0 npx vitest …` turns it off.
process.env.PHI_RX_FREEZE ??= '1';
