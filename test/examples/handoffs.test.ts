import { describe, expect, it } from 'vitest';
import { handoffDemo } from '../../examples/handoffs.js';

describe('examples/handoffs', () => {
  it('triage hands to billing, billing to refunds; the next prompt goes to refunds', async () => {
    expect(await handoffDemo()).toEqual([
      'handoff: triage → billing (double charge)',
      'handoff: billing → refunds (refund A-17)',
      '› I refunded the second charge of 40 EUR for order A-17.',
      'answered by refunds',
      '› The refund reaches your card within 3 days.',
      'answered by refunds',
    ]);
  });
});
