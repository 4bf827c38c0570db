/**
 * What changed in a card's trust fields between its pin and now, for `airlock registry pin`
 * to show before it asks: the digest, each interface (in preference order), the security
 * schemes and requirements, each skill (by id: added, removed, or which of its fields), and
 * the key that signed the card. Card text is the remote's: it is shown quoted, on one line,
 * without control or direction characters, and cut short.
 *
 * @example
 * ```ts
 * const changes = trustChanges(before, { digest, fields: trustFieldsOf(card), signature: null });
 * io.stdout(changeLines(changes, 80).join('\n'));
 * // digest        3a820d13cbd2b8f9a1eaeddf0e5a2ae4ed6186d1ebb0c54ff107a24cc112b221
 * //            →  5d1e…
 * // interface[0]  https://a.example/rpc (JSONRPC 1.0) → https://b.example/rpc (JSONRPC 1.0)
 * ```
 */
import type { CardTrustFields } from '../trust/index.js';
import { wrapLines } from './table.js';

/**
 * One changed field: what it is, and its value at the pin and now (`(none)` when absent).
 *
 * @example
 * ```ts
 * const change: TrustChange = { field: 'skill "book" name', old: '"Book"', new: '"Book trains"' };
 * ```
 */
export interface TrustChange {
  field: string;
  old: string;
  new: string;
}

/**
 * A card's side of the comparison. `fields` is absent when the pinned card's fields were not
 * recorded (only the digest is known then).
 *
 * @example
 * ```ts
 * const now: CardState = { digest: trusted.digest, fields: trustFieldsOf(trusted.card), signature: null };
 * ```
 */
export interface CardState {
  digest: string;
  fields?: CardTrustFields;
  signature: { kid: string; alg: string } | null;
}

const NONE = '(none)';
type Skill = CardTrustFields['skills'][number];
type Scheme = CardTrustFields['securitySchemes'][string];

/**
 * The changes from `pinned` to `now`, digest first; empty when they are the same card.
 *
 * @example
 * ```ts
 * trustChanges(state, state); // []
 * ```
 */
export function trustChanges(pinned: CardState, now: CardState & { fields: CardTrustFields }): TrustChange[] {
  const changes: TrustChange[] = [];
  const add = (field: string, old: string, next: string) => {
    if (old !== next) changes.push({ field, old, new: next });
  };
  add('digest', pinned.digest, now.digest);
  const before = pinned.fields;
  if (before === undefined) return changes;
  const after = now.fields;
  const count = Math.max(before.interfaces.length, after.interfaces.length);
  for (let index = 0; index < count; index += 1) {
    add(`interface[${index}]`, describeInterface(before.interfaces[index]), describeInterface(after.interfaces[index]));
  }
  for (const name of unionOf(Object.keys(before.securitySchemes), Object.keys(after.securitySchemes))) {
    add(
      `security scheme ${shown(name)}`,
      describeScheme(before.securitySchemes[name]),
      describeScheme(after.securitySchemes[name]),
    );
  }
  add('security', describeRequirements(before.securityRequirements), describeRequirements(after.securityRequirements));
  const oldSkills = new Map(before.skills.map((skill) => [skill.id, skill]));
  const newSkills = new Map(after.skills.map((skill) => [skill.id, skill]));
  for (const id of unionOf([...oldSkills.keys()], [...newSkills.keys()])) {
    const was = oldSkills.get(id);
    const is = newSkills.get(id);
    if (was === undefined || is === undefined) {
      add(`skill ${shown(id)}`, describeSkill(was), describeSkill(is));
      continue;
    }
    add(`skill ${shown(id)} name`, shown(was.name), shown(is.name));
    add(`skill ${shown(id)} description`, shown(was.description), shown(is.description));
    add(`skill ${shown(id)} tags`, listOf(was.tags), listOf(is.tags));
    add(`skill ${shown(id)} input modes`, listOf(was.inputModes), listOf(is.inputModes));
    add(`skill ${shown(id)} output modes`, listOf(was.outputModes), listOf(is.outputModes));
  }
  // The digest covers the order skills are listed in; say so when nothing else explains it.
  const sameIds = [...oldSkills.keys()].sort().join('\n') === [...newSkills.keys()].sort().join('\n');
  if (sameIds) add('skill order', listOf([...oldSkills.keys()]), listOf([...newSkills.keys()]));
  add('signed by', describeSignature(pinned.signature), describeSignature(now.signature));
  return changes;
}

/**
 * The changes as lines of at most `width` characters: `field  old → new` when it fits, else
 * the new value on a line of its own under the old one, each wrapped.
 *
 * @example
 * ```ts
 * changeLines([{ field: 'skill "x"', old: '(none)', new: '"X"' }], 80); // ['  skill "x"  (none) → "X"']
 * ```
 */
export function changeLines(changes: readonly TrustChange[], width: number): string[] {
  const labelWidth = Math.min(Math.max(0, ...changes.map((change) => change.field.length)), 24);
  const lines: string[] = [];
  for (const change of changes) {
    const label = change.field.padEnd(labelWidth);
    const oneLine = `  ${label}  ${change.old} → ${change.new}`;
    if (oneLine.length <= width) {
      lines.push(oneLine);
      continue;
    }
    const pad = ' '.repeat(labelWidth + 4);
    lines.push(...wrapLines(change.old, { width, indent: `  ${label}  `, hangingIndent: pad }));
    lines.push(...wrapLines(change.new, { width, indent: `${' '.repeat(labelWidth + 1)}→  `, hangingIndent: pad }));
  }
  return lines;
}

/**
 * Remote text as it may be shown: quoted, control and direction characters replaced, at most
 * `max` characters.
 *
 * @example
 * ```ts
 * shown('Book\u202etrains'); // '"Book?trains"'
 * ```
 */
export function shown(text: string, max = 60): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, '?');
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max)}…` : clean);
}

function describeInterface(value: CardTrustFields['interfaces'][number] | undefined): string {
  if (value === undefined) return NONE;
  return `${shown(value.url, 200).slice(1, -1)} (${shown(value.protocolBinding, 20).slice(1, -1)} ${shown(value.protocolVersion, 20).slice(1, -1)})`;
}

function describeScheme(scheme: Scheme | undefined): string {
  if (scheme === undefined) return NONE;
  let base: string;
  switch (scheme.type) {
    case 'http':
      base = `http ${shown(scheme.scheme, 20)}${scheme.bearerFormat === undefined ? '' : ` format ${shown(scheme.bearerFormat, 20)}`}`;
      break;
    case 'apiKey':
      base = `apiKey in ${shown(scheme.location, 10)} ${shown(scheme.name, 40)}`;
      break;
    case 'oauth2':
      base = `oauth2 ${
        Object.entries(scheme.flows)
          .map(
            ([kind, flow]) =>
              `${kind}${flow.tokenUrl === undefined ? '' : ` token ${shown(flow.tokenUrl, 120)}`} scopes ${listOf(flow.scopes)}`,
          )
          .join('; ') || 'no flows'
      }${scheme.metadataUrl === undefined ? '' : `, metadata ${shown(scheme.metadataUrl, 120)}`}`;
      break;
    case 'openIdConnect':
      base = `openIdConnect ${shown(scheme.openIdConnectUrl, 120)}`;
      break;
    case 'mutualTLS':
      base = 'mutualTLS';
      break;
  }
  return scheme.description === undefined ? base : `${base}, description ${shown(scheme.description, 40)}`;
}

function describeRequirements(requirements: CardTrustFields['securityRequirements']): string {
  if (requirements.length === 0) return NONE;
  return requirements
    .map((alternative) =>
      Object.entries(alternative)
        .map(
          ([name, scopes]) =>
            `${shown(name, 40)}${scopes.length > 0 ? ` [${scopes.map((s) => shown(s, 40)).join(', ')}]` : ''}`,
        )
        .join(' + '),
    )
    .join(' or ');
}

function describeSkill(skill: Skill | undefined): string {
  return skill === undefined ? NONE : `${shown(skill.name)}, tags ${listOf(skill.tags)}`;
}

function describeSignature(signature: CardState['signature']): string {
  return signature === null
    ? 'no checked signature'
    : `kid ${shown(signature.kid, 80)} (${shown(signature.alg, 10).slice(1, -1)})`;
}

function listOf(items: readonly string[] | undefined): string {
  if (items === undefined) return NONE;
  return items.length === 0 ? '[]' : items.map((item) => shown(item, 40)).join(', ');
}

function unionOf(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}
