// Cold start, the floor: a fresh node process and a hand-written one-turn loop over an async generator.
import { performance } from 'node:perf_hooks';
import { report } from './report.mjs';

const imported = performance.now();
async function* model() {
  for (let i = 0; i < 10; i++) yield { type: 'text', delta: 'abcd' };
}
let text = '';
for await (const part of model()) text += part.delta;
report(imported, text);
