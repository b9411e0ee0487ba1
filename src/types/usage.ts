/** Dollar rates per million tokens. */
export interface CostConfig {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Token counts for one turn, or summed over a loop or session. `reasoning` is a subset of `output`. */
export interface Usage {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
}

function empty(): Usage {
  return { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
}

function combine(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** Adds `b` into `a` in place; the hot path of usage accounting allocates nothing. */
function accumulate(into: Usage, b: Usage): Usage {
  into.input += b.input;
  into.output += b.output;
  into.reasoning += b.reasoning;
  into.cacheRead += b.cacheRead;
  into.cacheWrite += b.cacheWrite;
  into.totalTokens += b.totalTokens;
  return into;
}

/** Fraction of prompt tokens served from cache, 0 when nothing was processed. */
function cacheHitRate(u: Usage): number {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return prompt === 0 ? 0 : u.cacheRead / prompt;
}

/** Dollars for this usage; reasoning is already inside output, so it is not charged twice. */
function estimatedCost(u: Usage, cost: CostConfig): number {
  return (
    (u.input * cost.input +
      u.output * cost.output +
      u.cacheRead * (cost.cacheRead ?? cost.input) +
      u.cacheWrite * (cost.cacheWrite ?? cost.input)) /
    1_000_000
  );
}

/** Tokens that count against a budget: the reported total, else input + output. */
function tokensOf(u: Usage): number {
  return u.totalTokens > 0 ? u.totalTokens : u.input + u.output + u.cacheRead + u.cacheWrite;
}

export const Usage = { empty, combine, accumulate, cacheHitRate, estimatedCost, tokensOf };
