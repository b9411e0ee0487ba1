import { describe, expect, it } from 'vitest';
import { fixtureReport } from '../agent/helpers.js';

describe('what the loop makes per message keeps V8 hidden classes shared across runs', () => {
  // A spread followed by a field its source lacks (`{ ...message, turnId }`) gives every object a hidden
  // class of its own once the code is hot: a map per message in the old generation, megamorphic reads.
  it('tagged user and assistant messages, tool results and requests of two runs share their maps once the loop is hot', async () => {
    expect(await fixtureReport('hidden-classes', ['--allow-natives-syntax'])).toEqual({ user: true, assistant: true, toolResult: true, request: true });
  }, 90_000);
});
