/**
 * Tool digests: what is pinned of a tool server. Each tool's name, description and input
 * schema, as JCS (RFC 8785, the same canonical form as card trust digests) hashed with SHA-256;
 * and the server's digest over its whole tool list (each tool's name and digest, sorted), so a
 * tool added or removed changes it too.
 *
 * @example
 * ```ts
 * const listed = (await client.listTools()).tools;
 * const digests = toolDigests(listed);      // Map name → hex
 * const server = serverDigest(digests);     // hex
 * ```
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../trust/digest.js';

/**
 * A tool as its server lists it: the fields that are pinned.
 *
 * @example
 * ```ts
 * const tool: ListedTool = { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object' } };
 * ```
 */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/**
 * The digest of one tool: hex SHA-256 of the JCS of `{name, description, inputSchema}` (an
 * absent description counts as `''`). Throws for a schema JCS cannot encode or nested deeper
 * than 64 levels; the hub treats such a tool as changed.
 *
 * @example
 * ```ts
 * toolDigest({ name: 'a', inputSchema: { type: 'object' } }) === toolDigest({ name: 'a', description: '', inputSchema: { type: 'object' } }); // true
 * ```
 */
export function toolDigest(tool: ListedTool): string {
  const pinned = { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema };
  return sha256(canonicalJson(pinned));
}

/**
 * Digests of every listed tool, by name. A tool whose digest cannot be computed maps to
 * `undefined` (it never matches a pin). A name listed twice keeps the first.
 *
 * @example
 * ```ts
 * toolDigests([{ name: 'a', inputSchema: {} }]).get('a'); // '…64 hex…'
 * ```
 */
export function toolDigests(tools: readonly ListedTool[]): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const tool of tools) {
    if (out.has(tool.name)) continue;
    try {
      out.set(tool.name, toolDigest(tool));
    } catch {
      out.set(tool.name, undefined);
    }
  }
  return out;
}

/**
 * The digest of a server's tool list: hex SHA-256 of the JCS of `{name: digest}` for every
 * listed tool (an undigestable tool counts as `''`).
 *
 * @example
 * ```ts
 * serverDigest(new Map([['a', 'f'.repeat(64)]])); // '…64 hex…'
 * ```
 */
export function serverDigest(digests: ReadonlyMap<string, string | undefined>): string {
  // fromEntries keeps a name such as `__proto__` an own key.
  const entries = Object.fromEntries([...digests].map(([name, digest]) => [name, digest ?? '']));
  return sha256(canonicalJson(entries));
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
