/**
 * An agent's A2A extensions (`agents[].extensions`): what its card declares under
 * `capabilities.extensions` and what admission activates or requires (src/server/admission/
 * extensions.ts). The schema bounds the shape; {@link extensionsConfigProblem} says what a schema
 * cannot: the URI's form, a URI declared twice, the size of `params`.
 *
 * @example
 * ```yaml
 * agents:
 *   - slug: echo
 *     extensions:
 *       - uri: https://example.com/ext/citations/v1
 *         description: Replies carry citations in metadata.
 *         required: true
 *         params: { style: short }
 * ```
 */
/** Most extensions one agent declares. */
export const MAX_AGENT_EXTENSIONS = 16;
/** The longest extension URI (what `parseExtensions` reads of a request header). */
export const MAX_URI_CHARS = 512;
/** The largest `params` object, as JSON text. */
export const MAX_EXTENSION_PARAMS_BYTES = 4096;

/**
 * One declared extension as configured (the schema, ./extensions-schema.ts, is kept in step).
 *
 * @example
 * ```ts
 * const extension: AgentExtensionConfig = { uri: 'urn:example:ext:trace', required: false };
 * ```
 */
export interface AgentExtensionConfig {
  uri: string;
  description?: string;
  /** A caller must list it in `A2A-Extensions`, or its request is refused (-32008). */
  required?: boolean;
  /** Extension-specific settings, shown on the card as they are. */
  params?: Record<string, unknown>;
}

// An absolute https URL with a host, or a URN; never a space or a comma (the header is a comma list).
const HTTPS_URI = /^https:\/\/[^\s,/?#@]+(?:[/?#][^\s,]*)?$/;
const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:[^\s,]+$/;

/**
 * Whether `uri` names an extension as Airlock accepts it: `https://host/…` or `urn:nid:…`,
 * without whitespace or commas.
 *
 * @example
 * ```ts
 * isExtensionUri('https://example.com/ext/v1'); // true
 * isExtensionUri('http://example.com/ext');     // false
 * ```
 */
export function isExtensionUri(uri: string): boolean {
  if (URN.test(uri)) return true;
  if (!HTTPS_URI.test(uri)) return false;
  try {
    return new URL(uri).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The first problem of the agents' extensions (the key and what is wrong), or undefined.
 *
 * @example
 * ```ts
 * extensionsConfigProblem([{ extensions: [{ uri: 'ftp://x' }] }]);
 * // { key: 'agents[0].extensions[0].uri', problem: 'must be an absolute https:// URL or a urn: name, …' }
 * ```
 */
export function extensionsConfigProblem(
  agents: readonly { readonly extensions?: readonly AgentExtensionConfig[] }[],
): { key: string; problem: string } | undefined {
  for (const [index, agent] of agents.entries()) {
    const seen = new Set<string>();
    for (const [at, extension] of (agent.extensions ?? []).entries()) {
      const key = `agents[${index}].extensions[${at}]`;
      if (!isExtensionUri(extension.uri)) {
        return {
          key: `${key}.uri`,
          problem: 'must be an absolute https:// URL or a urn: name, without spaces or commas',
        };
      }
      if (seen.has(extension.uri)) return { key: `${key}.uri`, problem: `"${extension.uri}" is declared twice` };
      seen.add(extension.uri);
      const params = extension.params;
      if (params === undefined) continue;
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        return { key: `${key}.params`, problem: 'must be a mapping (a JSON object)' };
      }
      if (jsonBytes(params) > MAX_EXTENSION_PARAMS_BYTES) {
        return { key: `${key}.params`, problem: `must be at most ${MAX_EXTENSION_PARAMS_BYTES} bytes as JSON` };
      }
    }
  }
  return undefined;
}

/** The size of `value` as JSON text; a value JSON cannot hold (a cycle of YAML aliases) counts as too large. */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value), 'utf8');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
