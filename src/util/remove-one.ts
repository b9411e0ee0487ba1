/**
 * Removes the first `item` from `list` in place, the values after it moved down: no new array and
 * no new table. A `Set` or `Map` that shrinks on `delete` makes a new table, which a long-lived
 * owner (an agent's queue, a dispatch's watchers) then keeps past the young generation, once for
 * every tool call. Returns whether `item` was there.
 */
export function removeOne<T>(list: T[], item: T): boolean {
  const index = list.indexOf(item);
  if (index >= 0) removeAt(list, index);
  return index >= 0;
}

/** Removes `list[index]` in place, as {@link removeOne} does. */
export function removeAt<T>(list: T[], index: number): void {
  for (let i = index + 1; i < list.length; i++) list[i - 1] = list[i]!;
  list.pop();
}
