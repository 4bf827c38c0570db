/**
 * The memory store's ordered index: tasks kept sorted by (status timestamp, id) in sorted chunks,
 * so that an insert or removal is O(log n + B) and a page is a binary search plus the page.
 *
 * @example
 * ```ts
 * const index = new SortedIndex<SortKey>();
 * index.insert({ statusMs: 1, id: 'a' });
 * [...index.descendingBefore(index.end())]; // [{ statusMs: 1, id: 'a' }]
 * ```
 */

/**
 * The list order: status timestamp, then id. Task ids are unique, so no two keys are equal.
 *
 * @example
 * ```ts
 * const key: SortKey = { statusMs: Date.parse(task.status.timestamp), id: task.id };
 * ```
 */
export interface SortKey {
  readonly statusMs: number;
  readonly id: string;
}

/**
 * Negative if `a` sorts before `b` (older, or the same time and a smaller id).
 *
 * @example
 * ```ts
 * compareKeys({ statusMs: 1, id: 'a' }, { statusMs: 1, id: 'b' }); // -1
 * ```
 */
export function compareKeys(a: SortKey, b: SortKey): number {
  if (a.statusMs !== b.statusMs) return a.statusMs < b.statusMs ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** First position in a sorted array whose key is ≥ `key`. */
function lowerBoundIn(items: readonly SortKey[], key: SortKey): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(items[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A place between items: before `chunks[chunk][offset]`.
 *
 * @example
 * ```ts
 * const start: Position = index.lowerBound(cursor);
 * ```
 */
export interface Position {
  readonly chunk: number;
  readonly offset: number;
}

/** Target chunk size: chunks split above twice this and merge below a quarter of it. */
const CHUNK_LOAD = 256;

/**
 * An ascending sorted list kept as a list of sorted chunks (the "sorted containers" layout).
 * A plain sorted array would make every insert or removal an O(n) move; with chunks it is
 * O(log n + B), a rank query is O(n/B), and a walk from any position is O(1) per item.
 * Tasks are usually added with the newest timestamp, i.e. at the end, which is the cheap case.
 *
 * @example
 * ```ts
 * const index = new SortedIndex<Entry>();
 * index.insert(entry);
 * index.countFrom(index.lowerBound({ statusMs: floorMs, id: '' }));
 * ```
 */
export class SortedIndex<T extends SortKey> {
  private readonly chunks: T[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  insert(item: T): void {
    const { chunks } = this;
    const last = chunks.length - 1;
    if (last < 0) {
      chunks.push([item]);
    } else {
      // Tasks mostly arrive with the newest timestamp: then the item goes at the very end.
      let at = last;
      let chunk = chunks[last]!;
      if (compareKeys(chunk[chunk.length - 1]!, item) < 0) chunk.push(item);
      else {
        at = this.chunkFor(item);
        chunk = chunks[at]!;
        chunk.splice(lowerBoundIn(chunk, item), 0, item);
      }
      if (chunk.length > 2 * CHUNK_LOAD) chunks.splice(at + 1, 0, chunk.splice(CHUNK_LOAD));
    }
    this.count++;
  }

  /** Removes an item, found by its key: the key must not have changed since it was inserted. */
  remove(item: T): void {
    const at = this.chunkFor(item);
    const chunk = this.chunks[at];
    const offset = chunk === undefined ? 0 : lowerBoundIn(chunk, item);
    if (chunk?.[offset] !== item) throw new Error('SortedIndex: item not found; the index is corrupt');
    // The ends are the common cases (the oldest task evicted, the newest one updated), and
    // pop and shift allocate nothing, unlike splice, which returns the removed items.
    if (offset === chunk.length - 1) chunk.pop();
    else if (offset === 0) chunk.shift();
    else chunk.splice(offset, 1);
    this.count--;
    this.rebalance(at);
  }

  /** Where `key` would be inserted: every item before it is smaller. */
  lowerBound(key: SortKey): Position {
    const at = this.chunkFor(key);
    const chunk = this.chunks[at];
    return { chunk: at, offset: chunk === undefined ? 0 : lowerBoundIn(chunk, key) };
  }

  end(): Position {
    return { chunk: this.chunks.length, offset: 0 };
  }

  /** How many items are at or after a position. */
  countFrom(position: Position): number {
    let count = 0;
    for (let at = position.chunk; at < this.chunks.length; at++) count += this.chunks[at]!.length;
    return count - position.offset;
  }

  /** The items before a position, largest first. Do not modify the index while iterating. */
  *descendingBefore(position: Position): Generator<T> {
    let offset = position.offset - 1;
    for (let at = position.chunk; at >= 0; at--) {
      const chunk = this.chunks[at];
      if (chunk !== undefined) for (; offset >= 0; offset--) yield chunk[offset]!;
      offset = (this.chunks[at - 1]?.length ?? 0) - 1;
    }
  }

  /** The first chunk whose largest item is ≥ `key`; `chunks.length` if there is none. */
  private chunkFor(key: SortKey): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (compareKeys(chunk[chunk.length - 1]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Keeps chunks from shrinking into many tiny ones, which would make rank queries slow. */
  private rebalance(at: number): void {
    const chunk = this.chunks[at]!;
    if (chunk.length === 0) {
      this.chunks.splice(at, 1);
      return;
    }
    if (chunk.length >= CHUNK_LOAD / 4 || this.chunks.length === 1) return;
    const left = at + 1 < this.chunks.length ? at : at - 1;
    const merged = this.chunks[left]!.concat(this.chunks[left + 1]!);
    if (merged.length <= 2 * CHUNK_LOAD) this.chunks.splice(left, 2, merged);
    else this.chunks.splice(left, 2, merged.slice(0, merged.length >>> 1), merged.slice(merged.length >>> 1));
  }
}
