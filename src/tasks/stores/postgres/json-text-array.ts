/**
 * The `text[]` parameter of a batch's task bodies, written as PostgreSQL's array literal by
 * `JSON.stringify` rather than by pg's array encoder, which escapes each element with two regex
 * replacements in JavaScript (about 4 % of the PostgreSQL row's gateway CPU in a profile: every
 * body is JSON, full of quotes).
 *
 * Why it is exact: inside a double-quoted array element PostgreSQL reads `\x` as `x`, so an
 * element needs `"` and `\` escaped and nothing else. JSON.stringify of a string escapes exactly
 * those two, plus control characters and lone surrogates — and a text JSON.stringify wrote has
 * none of either left (they are written as escapes), so for such text the two quotings agree.
 *
 * @example
 * ```ts
 * const bodies = jsonTextArray(rows.map((row) => row.body)); // '{"{\"id\":\"t1\"}"}'
 * await client.query('SELECT unnest($1::text[])', [bodies]);
 * ```
 */

/**
 * The array literal of `texts`, each of which must be the output of `JSON.stringify` (the store
 * makes every body with it; another text could carry a raw control character, which this would
 * write as an escape PostgreSQL reads differently).
 *
 * @example
 * ```ts
 * jsonTextArray([JSON.stringify({ a: 'x"y' })]); // '{"{\\"a\\":\\"x\\\\\\"y\\"}"}'
 * ```
 */
export function jsonTextArray(texts: readonly string[]): string {
  let literal = '{';
  for (let index = 0; index < texts.length; index++) {
    if (index > 0) literal += ',';
    literal += JSON.stringify(texts[index]);
  }
  return `${literal}}`;
}
