/**
 * Where each configured person finds their own token, in words: the startup banner prints it
 * and the console's sign-in page shows it. Built from the token's origin only (a file path, an
 * environment variable name, or "the config file"), so the token itself can never be in it.
 *
 * @example
 * ```ts
 * tokenHints(config.approvals?.people ?? []); // [{ person: 'alice', where: 'generated into .airlock/alice-token' }]
 * ```
 */
import type { PersonEntry } from '../../config/load.js';

/** Where a token came from, as the config loader records it. */
export type TokenOrigin = NonNullable<PersonEntry['tokenOrigin']>;

/**
 * One person's sign-in hint.
 *
 * @example
 * ```ts
 * const hint: TokenHint = { person: 'alice', where: 'in $ALICE_TOKEN' };
 * ```
 */
export interface TokenHint {
  /** The `approvals.people` id. */
  readonly person: string;
  /** Where the token is: never the token. */
  readonly where: string;
}

/**
 * Says where a token is, from its origin.
 *
 * @example
 * ```ts
 * describeTokenOrigin({ kind: 'env', name: 'ALICE_TOKEN' }); // 'in $ALICE_TOKEN'
 * describeTokenOrigin({ kind: 'file', path: '.airlock/alice-token', generated: true }); // 'generated into .airlock/alice-token'
 * ```
 */
export function describeTokenOrigin(origin: TokenOrigin): string {
  switch (origin.kind) {
    case 'file':
      return `${origin.generated ? 'generated into' : 'in'} ${origin.path}`;
    case 'env':
      return `in $${origin.name}`;
    case 'inline':
      return 'written in the config file';
  }
}

/**
 * The hints for the configured people (a person without a recorded origin is left out).
 *
 * @example
 * ```ts
 * tokenHints([{ id: 'bob', tokenDigest, tokenOrigin: { kind: 'inline' } }]); // [{ person: 'bob', where: 'written in the config file' }]
 * ```
 */
export function tokenHints(people: readonly PersonEntry[]): TokenHint[] {
  return people.flatMap((person) =>
    person.tokenOrigin === undefined ? [] : [{ person: person.id, where: describeTokenOrigin(person.tokenOrigin) }],
  );
}
