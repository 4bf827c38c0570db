/**
 * Failed authentications per client address: after `limit` failures within a minute the address
 * is answered 429 for the rest of that minute, so credentials cannot be guessed at line rate.
 *
 * Windows are fixed per address: an address's window opens at its first failure and lasts
 * `windowMs`; the first failure after it has closed opens a new one. "The rest of that minute"
 * is therefore the rest of the window, never more than a minute. A sliding count would need a
 * timestamp per failure; a fixed window needs two numbers and gives a plain, predictable
 * Retry-After. The known cost of fixed windows (up to 2 × limit guesses across a boundary) is
 * acceptable for a limit this small.
 *
 * IPv6 addresses are counted per /64 by default: one host is routinely given a whole /64, and
 * counting each address apart would let it rotate through 2^64 addresses for fresh attempts. The
 * price is that hosts sharing a /64 share a budget, just as hosts behind one IPv4 NAT do.
 *
 * Memory is bounded by `maxAddresses`. Windows are kept in the order they opened, so the oldest
 * entry is always the next to close: when the table is full a new address takes its place,
 * which is a closed window if there is one, else the open window closest to closing. O(1).
 *
 * @example
 * ```ts
 * const failures = new AuthFailureLimiter({ limit: 10 });
 * const locked = failures.isLocked(address, performance.now());
 * if (locked > 0) return respond429({ 'retry-after': String(locked) });
 * if (!authenticated) failures.recordFailure(address, performance.now());
 * ```
 */
import { RecencyTable } from './recency.js';

/** Options of {@link AuthFailureLimiter}. */
export interface AuthFailureLimiterOptions {
  /** Failures per window after which the address is locked for the rest of it; 10 unless told. */
  limit?: number;
  /** Window length in ms; a minute unless told. */
  windowMs?: number;
  /** Addresses (or /64 prefixes) remembered at once; 100 000 unless told. */
  maxAddresses?: number;
  /** Maps an address to the key it is counted under; {@link addressBucket} unless told. */
  bucket?: (address: string) => string;
}

/**
 * The lockout of addresses that failed authentication too often, as the server uses it:
 * {@link AuthFailureLimiter} in one process, or one shared by replicas (`shared/`), which answers
 * asynchronously.
 *
 * @example
 * ```ts
 * const lockout: AuthFailureLockout = new AuthFailureLimiter({ limit: 10 });
 * if ((await lockout.isLocked(address, performance.now())) > 0) refuse429();
 * ```
 */
export interface AuthFailureLockout {
  /** The whole seconds (≥ 1) until `address` may try again, or 0 when it is not locked. */
  isLocked(address: string, now: number): number | Promise<number>;
  /** Counts one failure; answers what isLocked would now. */
  recordFailure(address: string, now: number): number | Promise<number>;
}

/** How many addresses an {@link AuthFailureLimiter} remembers unless told. */
export const DEFAULT_MAX_FAILURE_ADDRESSES = 100_000;

/**
 * Counts failed authentications per client address and locks an address out for the rest of
 * its window once it reaches the limit. Pass a monotonic clock (`performance.now()`).
 *
 * @example
 * ```ts
 * const failures = new AuthFailureLimiter({ limit: 2 });
 * failures.recordFailure('203.0.113.9', 0);
 * failures.recordFailure('203.0.113.9', 1_000);
 * failures.isLocked('203.0.113.9', 20_000); // 40: seconds until the window that opened at 0 closes
 * failures.isLocked('203.0.113.9', 60_000); // 0
 * ```
 */
export class AuthFailureLimiter implements AuthFailureLockout {
  /** Addresses in order of their window's opening; per slot, when it opened and its failures. */
  readonly #table: RecencyTable;
  readonly #start: number[] = [];
  readonly #count: number[] = [];
  readonly #limit: number;
  readonly #window: number;
  readonly #maxSeconds: number;
  readonly #bucket: (address: string) => string;

  constructor(options: AuthFailureLimiterOptions = {}) {
    const {
      limit = 10,
      windowMs = 60_000,
      maxAddresses = DEFAULT_MAX_FAILURE_ADDRESSES,
      bucket = addressBucket,
    } = options;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer ≥ 1');
    if (!(windowMs > 0) || !Number.isFinite(windowMs)) throw new RangeError('windowMs must be a positive number');
    if (!Number.isInteger(maxAddresses) || maxAddresses < 1) {
      throw new RangeError('maxAddresses must be an integer ≥ 1');
    }
    this.#limit = limit;
    this.#window = windowMs;
    this.#maxSeconds = Math.ceil(windowMs / 1000);
    this.#table = new RecencyTable(maxAddresses);
    this.#bucket = bucket;
  }

  /**
   * Whether `address` is locked out at `now` (ms).
   *
   * @returns the whole seconds (≥ 1) until its window closes, or 0 when it is not locked.
   * @example
   * ```ts
   * const seconds = failures.isLocked(address, performance.now());
   * if (seconds > 0) res.writeHead(429, { 'retry-after': String(seconds) });
   * ```
   */
  isLocked(address: string, now: number): number {
    const slot = this.#table.slotOf(this.#bucket(address));
    return slot === undefined ? 0 : this.#lockedFor(slot, now);
  }

  /**
   * Counts one failed authentication from `address` at `now` (ms).
   *
   * @returns what {@link AuthFailureLimiter.isLocked} now answers: > 0 once this failure reached the limit.
   * @example
   * ```ts
   * if (failures.recordFailure(address, performance.now()) > 0) audit('address locked', address);
   * ```
   */
  recordFailure(address: string, now: number): number {
    const key = this.#bucket(address);
    const table = this.#table;
    let slot = table.slotOf(key);
    if (slot !== undefined && now < (this.#start[slot] as number) + this.#window) {
      this.#count[slot] = (this.#count[slot] as number) + 1;
    } else {
      // A new window. Touching keeps the table in order of opening, so when it is full the
      // oldest entry is the right one to drop: closed already, or the closest to closing.
      if (slot === undefined) slot = table.insert(key, table.oldest);
      else table.touch(slot);
      this.#start[slot] = now;
      this.#count[slot] = 1;
    }
    return this.#lockedFor(slot, now);
  }

  /** Addresses currently remembered (for metrics and tests). Closed windows stay until reused. */
  get size(): number {
    return this.#table.size;
  }

  /** Seconds left in the slot's window if it is open and has reached the limit; else 0. */
  #lockedFor(slot: number, now: number): number {
    if ((this.#count[slot] as number) < this.#limit) return 0;
    const remaining = (this.#start[slot] as number) + this.#window - now;
    if (remaining <= 0) return 0;
    const seconds = Math.ceil(remaining / 1000);
    // Clamped: ≤ the window because a clock that stepped backwards must not turn into a
    // lock-out longer than the rule allows (remaining > 0 already makes it ≥ 1).
    return seconds > this.#maxSeconds ? this.#maxSeconds : seconds;
  }
}

/**
 * The key an address is counted under: an IPv6 address's /64 prefix (`2001:db8:0:1::/64`),
 * anything else unchanged. An IPv4-mapped IPv6 address (`::ffff:203.0.113.9`, in either
 * notation) counts as its IPv4 address, as the gate's own unmapping would have it. Input that
 * does not parse as IPv6 is returned unchanged: it is then counted on its own.
 *
 * @example
 * ```ts
 * addressBucket('2001:db8::1');           // '2001:db8:0:0::/64'
 * addressBucket('2001:db8::ffff:1');      // '2001:db8:0:0::/64' (same host network)
 * addressBucket('::ffff:203.0.113.9');    // '203.0.113.9'
 * addressBucket('203.0.113.9');           // '203.0.113.9'
 * ```
 */
export function addressBucket(address: string): string {
  // IPv4 (the common case) costs one scan.
  if (address.indexOf(':') === -1) return address;
  const percent = address.indexOf('%');
  if (!parseIpv6(address, percent === -1 ? address.length : percent)) return address;
  const g = GROUPS;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    const hi = g[6] as number;
    const lo = g[7] as number;
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `${(g[0] as number).toString(16)}:${(g[1] as number).toString(16)}:${(g[2] as number).toString(16)}:${(g[3] as number).toString(16)}::/64`;
}

/** Scratch space for {@link parseIpv6}: the eight groups of the last address parsed. */
const GROUPS = new Uint16Array(8);

const COLON = 0x3a;
const DOT = 0x2e;

/** The value of a hex digit's char code, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/**
 * Parses `s[0, end)` as an IPv6 address (RFC 4291 text forms, with an optional dotted IPv4
 * tail) into {@link GROUPS}. A hand scanner rather than split and regexes: no allocation.
 */
function parseIpv6(s: string, end: number): boolean {
  let count = 0;
  let gapAt = -1;
  let i = 0;
  if (end >= 2 && s.charCodeAt(0) === COLON && s.charCodeAt(1) === COLON) {
    gapAt = 0;
    i = 2;
  }
  while (i < end) {
    let value = 0;
    let j = i;
    while (j < end && j - i < 5) {
      const digit = hexValue(s.charCodeAt(j));
      if (digit < 0) break;
      value = value * 16 + digit;
      j++;
    }
    if (j < end && s.charCodeAt(j) === DOT) {
      // A dotted IPv4 tail: two groups, and nothing may follow it.
      if (count > 6) return false;
      const v4 = parseDottedQuad(s, i, end);
      if (v4 < 0) return false;
      GROUPS[count++] = Math.floor(v4 / 0x10000);
      GROUPS[count++] = v4 & 0xffff;
      break;
    }
    if (j === i || j - i > 4 || count >= 8) return false;
    GROUPS[count++] = value;
    if (j === end) break;
    if (s.charCodeAt(j) !== COLON) return false;
    j++;
    if (j < end && s.charCodeAt(j) === COLON) {
      if (gapAt !== -1) return false;
      gapAt = count;
      j++;
    } else if (j === end) {
      return false; // a single trailing colon
    }
    i = j;
  }
  if (gapAt === -1) return count === 8;
  // '::' stands for at least one group of zeros: slide the tail to the end and zero the gap.
  if (count > 7) return false;
  const tail = count - gapAt;
  for (let k = 0; k < tail; k++) GROUPS[7 - k] = GROUPS[count - 1 - k] as number;
  for (let k = gapAt; k < 8 - tail; k++) GROUPS[k] = 0;
  return true;
}

/** `s[from, end)` as a dotted quad's 32-bit value, or -1. */
function parseDottedQuad(s: string, from: number, end: number): number {
  let value = 0;
  let octets = 0;
  let i = from;
  while (octets < 4) {
    let octet = 0;
    const start = i;
    while (i < end && i - start < 3) {
      const c = s.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      octet = octet * 10 + (c - 0x30);
      i++;
    }
    if (i === start || octet > 255) return -1;
    value = value * 256 + octet;
    octets++;
    if (octets < 4) {
      if (i >= end || s.charCodeAt(i) !== DOT) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}
