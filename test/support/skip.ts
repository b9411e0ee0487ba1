import { describe } from 'vitest';

/**
 * For `describe.skipIf(skipGroup(...))`: when `missing` names what this machine lacks, prints one line saying which
 * group of tests is skipped and why (`↓ skipped: <group>: <missing>`, on stderr as the file is collected) and returns
 * true; otherwise returns false and prints nothing. `npm test` thus ends up with one line per skipped group.
 */
export function skipGroup(group: string, missing: string | false | null | undefined): boolean {
  if (!missing) return false;
  process.stderr.write(`↓ skipped: ${group}: ${missing}\n`);
  return true;
}

/** `describe`, skipped with its one line when `missing` says what this machine lacks: `describeNeeding(missing)(name, fn)`. */
export function describeNeeding(missing: string | false | null | undefined): (name: string, fn: () => void) => void {
  return (name, fn) => describe.skipIf(skipGroup(name, missing))(name, fn);
}
