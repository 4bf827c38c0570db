/**
 * What a pin stood for. The pin file keeps only a card's trust digest; to show an operator
 * what changed before a re-pin, the CLI keeps, next to it (`pins.cards.json` beside
 * `pins.json`), the trust fields of each pinned card and the key that signed it, recorded
 * whenever a CLI run sees the card that matches the pin (`airlock agents`, `airlock registry
 * pin`). A record is believed only when its fields hash to the pinned digest, so an edited or
 * stale file can hide nothing: at worst the fields are "not recorded". The pin file stays the
 * only authority; this file is for display.
 *
 * @example
 * ```ts
 * const snapshots = new PinnedCardFile(pinnedCardsPathFor(runtime.pinsPath));
 * await snapshots.record('travel', trusted);
 * const before = await snapshots.get('travel', pin.digest); // undefined when not recorded
 * ```
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { canonicalJson, trustFieldsOf, type CardTrustFields, type TrustedCard } from '../trust/index.js';
import { readStateBody, writeStateFile } from '../state/file.js';

/**
 * A card as it was pinned: its digest, trust fields, and the key whose signature verified.
 *
 * @example
 * ```ts
 * const record: PinnedCard = { digest, fields: trustFieldsOf(card), signature: null, recordedAt: '2026-…Z' };
 * ```
 */
export interface PinnedCard {
  digest: string;
  fields: CardTrustFields;
  /** The signature that verified with the entry's `card_keys`; null when none was checked or the card is unsigned. */
  signature: { kid: string; alg: string } | null;
  /** ISO 8601 UTC. */
  recordedAt: string;
}

const FILE_VERSION = 1;
/** A record is a few KiB; a registry a few hundred entries at most. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/**
 * Where the pinned cards of a pin file are kept: beside it, `pins.json` → `pins.cards.json`.
 *
 * @example
 * ```ts
 * pinnedCardsPathFor('/work/.airlock/pins.json'); // '/work/.airlock/pins.cards.json'
 * ```
 */
export function pinnedCardsPathFor(pinsPath: string): string {
  return join(dirname(pinsPath), `${basename(pinsPath, '.json')}.cards.json`);
}

/**
 * The pinned-card file. Reads never throw (a missing or unreadable file records nothing);
 * writes replace the file atomically, mode 0600.
 *
 * @example
 * ```ts
 * const snapshots = new PinnedCardFile('.airlock/pins.cards.json');
 * ```
 */
export class PinnedCardFile {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /**
   * The recorded card of `name` whose trust fields hash to `digest`, or undefined.
   *
   * @example
   * ```ts
   * const before = await snapshots.get('travel', (await pins.get('travel'))!.digest);
   * ```
   */
  async get(name: string, digest: string): Promise<PinnedCard | undefined> {
    const record = (await this.load())[name];
    if (!isPinnedCard(record) || record.digest !== digest) return undefined;
    try {
      return fieldsDigest(record.fields) === digest ? record : undefined;
    } catch {
      return undefined; // fields JCS cannot encode were never written by us
    }
  }

  /**
   * Records `trusted` as the card pinned for `name`.
   *
   * @example
   * ```ts
   * await snapshots.record('travel', await runtime.trust.inspect(cardTrustEntry(entry)));
   * ```
   */
  async record(name: string, trusted: TrustedCard): Promise<void> {
    const cards = await this.load();
    const signature =
      trusted.signature === undefined ? null : { kid: trusted.signature.kid, alg: trusted.signature.alg };
    const before = cards[name];
    if (isPinnedCard(before) && before.digest === trusted.digest && sameSignature(before.signature, signature)) return;
    const record: PinnedCard = {
      digest: trusted.digest,
      fields: trustFieldsOf(trusted.card),
      signature,
      recordedAt: new Date().toISOString(),
    };
    // A plain object with a null prototype: an entry named `__proto__` stays an ordinary key.
    const next: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, cards);
    next[name] = record;
    await writeStateFile(this.path, `${JSON.stringify({ version: FILE_VERSION, cards: next }, null, 2)}\n`);
  }

  private async load(): Promise<Record<string, unknown>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch {
      return {};
    }
    try {
      const fail = (problem: string) => new Error(problem);
      return readStateBody(
        text,
        { version: FILE_VERSION, key: 'cards', shape: 'object', maxBytes: MAX_FILE_BYTES },
        fail,
      );
    } catch {
      return {}; // display only: an unreadable record shows as "not recorded"
    }
  }
}

/** The trust digest of recorded fields: how `cardTrustDigest` hashes a card's. */
function fieldsDigest(fields: CardTrustFields): string {
  return createHash('sha256').update(canonicalJson(fields), 'utf8').digest('hex');
}

function sameSignature(a: PinnedCard['signature'], b: PinnedCard['signature']): boolean {
  return a?.kid === b?.kid && a?.alg === b?.alg;
}

/** The shape a record must have to be read at all; its digest is checked apart. */
function isPinnedCard(value: unknown): value is PinnedCard {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const fields = record.fields as Record<string, unknown> | null | undefined;
  const signature = record.signature as Record<string, unknown> | null | undefined;
  return (
    typeof record.digest === 'string' &&
    typeof record.recordedAt === 'string' &&
    typeof fields === 'object' &&
    fields !== null &&
    Array.isArray(fields.interfaces) &&
    Array.isArray(fields.skills) &&
    Array.isArray(fields.securityRequirements) &&
    typeof fields.securitySchemes === 'object' &&
    fields.securitySchemes !== null &&
    (signature === null || (typeof signature?.kid === 'string' && typeof signature.alg === 'string'))
  );
}
