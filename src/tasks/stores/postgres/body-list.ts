/**
 * A batch's task bodies as one `text` parameter, split back into a `text[]` by PostgreSQL
 * (`string_to_array($n::text, chr(30))`, {@link bodyListSql}), rather than as an array literal:
 * an array element needs each `"` and `\` escaped, and every body is JSON, full of quotes. The
 * escaping was 1.4 µs a request of the PostgreSQL row's gateway CPU (JSON.stringify of each body);
 * a join is a copy.
 *
 * Why it is exact: the separator is U+001E, a control character, and JSON.stringify writes every
 * control character inside a string as an escape and none outside one, so no body it wrote holds
 * the separator, and the split gives back each body as it was.
 *
 * @example
 * ```ts
 * const bodies = joinBodies(rows.map((row) => row.body));
 * await client.query(`SELECT unnest(${bodyListSql('$1')})`, [bodies]);
 * ```
 */

/** What separates two bodies: U+001E, which no JSON.stringify output holds unescaped. */
const SEPARATOR = '\u001e';

/**
 * The SQL expression that splits the parameter `param` back into the bodies' `text[]`.
 *
 * @example
 * ```ts
 * bodyListSql('$8'); // "string_to_array($8::text, chr(30))"
 * ```
 */
export function bodyListSql(param: string): string {
  return `string_to_array(${param}::text, chr(${SEPARATOR.charCodeAt(0)}))`;
}

/**
 * The one text of `texts`, each of which must be the output of `JSON.stringify` (the store makes
 * every body with it; another text could hold the separator and be split in two).
 *
 * @example
 * ```ts
 * joinBodies([JSON.stringify({ a: 1 }), JSON.stringify({ b: 2 })]); // '{"a":1}\u001e{"b":2}'
 * ```
 */
export function joinBodies(texts: readonly string[]): string {
  return texts.join(SEPARATOR);
}
