import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

/** An issue reduced to where it is (a full path from the root) and what is wrong there. */
export interface LocatedIssue {
  path: PropertyKey[];
  message: string;
}

/**
 * The most precise explanation of a zod issue. A union ("text or image", "string or array")
 * reports only "Invalid input" at the union itself; this looks into its branches and follows the
 * one that got furthest, so an image block with a numeric `data` is reported at
 * `content[1].data`, not at `content`. Branches that failed on a discriminator (`type`, `role`)
 * or on the kind of value are the wrong branch, not the problem; when every branch is, the
 * discriminator is named with the values it may take.
 */
export function locateIssue(issue: Issue, prefix: readonly PropertyKey[] = []): LocatedIssue {
  const here = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { path: here, message: issue.message };
  const located: { issue: LocatedIssue; wrongBranch: boolean; first: Issue }[] = [];
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first) continue;
    const at = locateIssue(first, here);
    located.push({ issue: at, first, wrongBranch: isWrongBranch(first, at.path.length - here.length) });
  }
  const candidates = located.filter((l) => !l.wrongBranch);
  if (candidates.length > 0) {
    return candidates.reduce((best, l) => (l.issue.path.length > best.issue.path.length ? l : best)).issue;
  }
  const discriminators = located.filter((l) => l.first.code === 'invalid_value' && l.first.path.length === 1);
  if (discriminators.length > 0 && discriminators.length === located.length) {
    const key = discriminators[0]!.first.path[0]!;
    const allowed = discriminators.flatMap((l) => (l.first.code === 'invalid_value' ? l.first.values : [])).map((v) => JSON.stringify(v));
    return { path: [...here, key], message: `Invalid input: expected one of ${allowed.join('|')}` };
  }
  const kinds = located.flatMap((l) => (l.first.code === 'invalid_type' && l.first.path.length === 0 ? [l.first.expected] : []));
  if (kinds.length === located.length && kinds.length > 0) return { path: here, message: `Invalid input: expected ${kinds.join(' or ')}` };
  return { path: here, message: issue.message };
}

/** The branch failed because the value is not of its kind at all: a wrong discriminator or type. */
function isWrongBranch(first: Issue, depth: number): boolean {
  if (first.code === 'invalid_type' && first.path.length === 0) return true;
  if (first.code === 'invalid_value' && first.path.length === 1 && depth === 1) return true;
  return false;
}
