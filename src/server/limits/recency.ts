/**
 * A fixed-capacity table of string keys in order of last touch, for the limiters' bounded
 * memory. Slots are numbered; a limiter keeps its per-key numbers in its own arrays indexed by
 * slot, and this class keeps the key → slot map and a doubly linked list of slots (oldest first)
 * in plain number arrays: touching, evicting and reusing are O(1) with no object per key.
 *
 * Why not the insertion order of a `Map` (delete and re-set to touch, iterate to find the
 * oldest)? V8 leaves a hole for every deleted entry until the table is rehashed, and iteration
 * walks the holes: under a flood of new keys, finding the oldest cost tens of µs per call.
 *
 * Internal to `limits/`; not re-exported.
 *
 * @example
 * ```ts
 * const table = new RecencyTable(100_000);
 * let slot = table.slotOf(key);
 * if (slot === undefined) slot = table.insert(key, table.oldest); // reuses the oldest slot when full
 * else table.touch(slot);
 * ```
 */
export class RecencyTable {
  readonly capacity: number;
  readonly #index = new Map<string, number>();
  readonly #keys: string[] = [];
  readonly #prev: number[] = [];
  readonly #next: number[] = [];
  /** Least recently touched slot, or -1 when empty. */
  #head = -1;
  /** Most recently touched slot, or -1 when empty. */
  #tail = -1;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Keys held. */
  get size(): number {
    return this.#index.size;
  }

  /** Whether every slot is taken, so an insert must name a victim. */
  get full(): boolean {
    return this.#keys.length >= this.capacity;
  }

  /** The least recently touched slot (-1 when empty). */
  get oldest(): number {
    return this.#head;
  }

  /** The slot touched after `slot` (-1 at the newest). */
  newerThan(slot: number): number {
    return this.#next[slot] as number;
  }

  /** `key`'s slot, or undefined. */
  slotOf(key: string): number | undefined {
    return this.#index.get(key);
  }

  /**
   * Adds `key` as the most recent and returns its slot: a new slot while there is room, else
   * `victim`'s slot, whose key is forgotten. The caller overwrites its per-slot values.
   */
  insert(key: string, victim: number): number {
    let slot: number;
    if (this.#keys.length < this.capacity) {
      slot = this.#keys.length;
      this.#keys.push(key);
      this.#prev.push(-1);
      this.#next.push(-1);
    } else {
      slot = victim;
      this.#index.delete(this.#keys[slot] as string);
      this.#keys[slot] = key;
      this.#unlink(slot);
    }
    this.#index.set(key, slot);
    this.#append(slot);
    return slot;
  }

  /** Makes `slot` the most recently touched. */
  touch(slot: number): void {
    if (slot === this.#tail) return;
    this.#unlink(slot);
    this.#append(slot);
  }

  #unlink(slot: number): void {
    const prev = this.#prev[slot] as number;
    const next = this.#next[slot] as number;
    if (prev === -1) this.#head = next;
    else this.#next[prev] = next;
    if (next === -1) this.#tail = prev;
    else this.#prev[next] = prev;
  }

  #append(slot: number): void {
    this.#prev[slot] = this.#tail;
    this.#next[slot] = -1;
    if (this.#tail === -1) this.#head = slot;
    else this.#next[this.#tail] = slot;
    this.#tail = slot;
  }
}
