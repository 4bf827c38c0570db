/**
 * Model-safe tool names: what a model is told to call, derived from the operator's
 * `server.tool` name. Only `[a-z0-9_]`, at most 64 characters, unique within a turn, so a name
 * can neither carry markup nor collide with another tool.
 *
 * @example
 * ```ts
 * modelToolNames(['files.read_file', 'web.Search']); // ['files__read_file', 'web__search']
 * ```
 */
import { createHash } from 'node:crypto';

/** Longest model-safe name (the common limit of function-calling APIs). */
export const MAX_MODEL_TOOL_NAME = 64;

/**
 * The model-safe form of one `server.tool` name: lower case, `.` between server and tool
 * becomes `__`, every other character outside `[a-z0-9_]` becomes `_`; a name longer than 64 is
 * cut and ends with 8 hex digits of its SHA-256, so two long names stay apart.
 *
 * @example
 * ```ts
 * modelToolName('files.read_file'); // 'files__read_file'
 * modelToolName('git.log-Tree');    // 'git__log_tree'
 * ```
 */
export function modelToolName(qualified: string): string {
  const dot = qualified.indexOf('.');
  const server = dot < 0 ? qualified : qualified.slice(0, dot);
  const tool = dot < 0 ? '' : qualified.slice(dot + 1);
  const safe = (part: string): string => part.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const name = dot < 0 ? safe(server) : `${safe(server)}__${safe(tool)}`;
  if (name.length <= MAX_MODEL_TOOL_NAME) return name;
  return `${name.slice(0, MAX_MODEL_TOOL_NAME - 9)}_${shortHash(qualified)}`;
}

/**
 * Model-safe names for a list of `server.tool` names, in order, all distinct: a name that
 * another already took gets `_2`, `_3`, … (cut to fit 64 characters).
 *
 * @example
 * ```ts
 * modelToolNames(['a.b-c', 'a.b_c']); // ['a__b_c', 'a__b_c_2']
 * ```
 */
export function modelToolNames(qualified: readonly string[]): string[] {
  const taken = new Set<string>();
  return qualified.map((name) => {
    const base = modelToolName(name);
    let candidate = base;
    for (let n = 2; taken.has(candidate); n += 1) {
      const suffix = `_${n}`;
      candidate = `${base.slice(0, MAX_MODEL_TOOL_NAME - suffix.length)}${suffix}`;
    }
    taken.add(candidate);
    return candidate;
  });
}

function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 8);
}
