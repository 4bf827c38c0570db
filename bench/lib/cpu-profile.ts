/**
 * A V8 CPU profile (`node --cpu-prof`) read for the stretches of load it was under: the self
 * time of each sample taken inside one of the windows, per request, split by where the code
 * lives. Used by bench/profile.ts to put Airlock's profile beside the guarded floor's.
 *
 * The windows are in the profile's own clock: V8 stamps samples with the same monotonic clock
 * that `process.hrtime` reads on Linux, so a window read in the load generator applies to a
 * profile written by another process on the same machine.
 *
 * @example
 * ```ts
 * const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
 * const split = splitProfile(profile, [{ fromMicros, toMicros }], requests, { ownPrefixes: ['dist/'], root: '/work/airlock/' });
 * split.parts.own; // µs a request in the server's own JavaScript
 * ```
 */

/** The parts of `.cpuprofile` JSON read here. */
export interface CpuProfile {
  nodes: readonly { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: readonly number[];
  timeDeltas: readonly number[];
}

/** Where time goes: the server's own code, node's, dependencies', V8's and the collector's. */
export type ProfilePart = 'own' | 'node' | 'dependencies' | 'native' | 'collector' | 'program';

/** The parts in the order they are printed, with what each is. */
export const PROFILE_PARTS: readonly (readonly [ProfilePart, string])[] = [
  ['own', 'own JavaScript'],
  ['node', "node's JavaScript (node:*)"],
  ['dependencies', 'dependencies (node_modules)'],
  ['native', 'V8 built-ins and native code'],
  ['collector', "V8's collector"],
  ['program', 'outside JavaScript ((program))'],
];

/** One function's self time. */
export interface FunctionTime {
  /** `name file:line`, the file relative to the repository. */
  name: string;
  part: ProfilePart;
  /** The folder of own code (`server/admission`), else the part's name. */
  folder: string;
  micros: number;
}

/** A profile's windows split per request. */
export interface ProfileSplit {
  /** Samples inside the windows: none means the windows and the profile do not overlap. */
  samples: number;
  /** Busy µs a request (idle time left out). */
  busy: number;
  /** Idle µs a request: the load did not keep the server busy that long. */
  idle: number;
  parts: Record<ProfilePart, number>;
  /** µs a request by own folder, largest first. */
  folders: { folder: string; micros: number }[];
  /** µs a request by function, largest first. */
  functions: FunctionTime[];
}

export interface SplitOptions {
  /** The repository's root as it appears in the profile's URLs, without `file://`, ending in `/`. */
  root: string;
  /** Paths (relative to `root`) whose code counts as the server's own, e.g. `dist/`. */
  ownPrefixes: readonly string[];
}

/** `[fromMicros, toMicros)` in the profile's clock. */
export interface ProfileWindow {
  fromMicros: number;
  toMicros: number;
}

/**
 * The self time of the samples inside any of `windows`, per request (`requests` answered in them).
 *
 * @example
 * ```ts
 * splitProfile(profile, [first, second], 80_000, { root: '/repo/', ownPrefixes: ['dist/'] }).busy; // e.g. 92.4
 * ```
 */
export function splitProfile(
  profile: CpuProfile,
  windows: readonly ProfileWindow[],
  requests: number,
  options: SplitOptions,
): ProfileSplit {
  const selfByNode = new Map<number, number>();
  let samples = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!windows.some((window) => at >= window.fromMicros && at < window.toMicros)) continue;
    const node = profile.samples[i]!;
    samples += 1;
    selfByNode.set(node, (selfByNode.get(node) ?? 0) + delta);
  }
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parts: Record<ProfilePart, number> = { own: 0, node: 0, dependencies: 0, native: 0, collector: 0, program: 0 };
  const functions = new Map<string, FunctionTime>();
  const folders = new Map<string, number>();
  let idle = 0;
  const perRequest = requests > 0 ? 1 / requests : Number.NaN;
  for (const [id, micros] of selfByNode) {
    const frame = nodes.get(id)?.callFrame;
    if (frame === undefined) continue;
    if (frame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    const { part, file, folder } = placeOf(frame.functionName, frame.url, options);
    const share = micros * perRequest;
    parts[part] += share;
    const name = `${frame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${frame.lineNumber + 1}`}`;
    const entry = functions.get(name) ?? { name, part, folder, micros: 0 };
    entry.micros += share;
    functions.set(name, entry);
    if (part === 'own') folders.set(folder, (folders.get(folder) ?? 0) + share);
  }
  const busy = Object.values(parts).reduce((sum, value) => sum + value, 0);
  return {
    samples,
    busy,
    idle: idle * perRequest,
    parts,
    folders: [...folders].map(([folder, micros]) => ({ folder, micros })).sort((a, b) => b.micros - a.micros),
    functions: [...functions.values()].sort((a, b) => b.micros - a.micros),
  };
}

/**
 * Where a frame's code lives: its part, its file relative to the root, and (own code) its folder,
 * the first two levels under the own prefix (`server/admission`, `tasks/service.js`).
 *
 * @example
 * ```ts
 * placeOf('handle', 'file:///repo/dist/server/http.js', { root: '/repo/', ownPrefixes: ['dist/'] });
 * // { part: 'own', file: 'dist/server/http.js', folder: 'server/http.js' }
 * ```
 */
export function placeOf(
  functionName: string,
  url: string,
  options: SplitOptions,
): { part: ProfilePart; file: string; folder: string } {
  if (functionName === '(garbage collector)') return { part: 'collector', file: '', folder: 'collector' };
  if (functionName === '(program)') return { part: 'program', file: '', folder: 'program' };
  if (url === '') return { part: 'native', file: '', folder: 'native' };
  if (url.startsWith('node:')) return { part: 'node', file: url, folder: 'node' };
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const file = path.startsWith(options.root) ? path.slice(options.root.length) : path;
  for (const prefix of options.ownPrefixes) {
    if (!file.startsWith(prefix)) continue;
    const levels = file.slice(prefix.length).split('/');
    return { part: 'own', file, folder: levels.slice(0, 2).join('/') };
  }
  if (file.includes('node_modules/')) return { part: 'dependencies', file, folder: 'dependencies' };
  return { part: 'own', file, folder: file.split('/').slice(0, 2).join('/') };
}

/**
 * Functions whose time differs most between two splits (µs a request, `a` less `b`), matched by
 * name; `filter` keeps some (node's and V8's native functions, say).
 *
 * @example
 * ```ts
 * largestDifferences(airlock, floor, 10, (f) => f.part === 'node');
 * ```
 */
export function largestDifferences(
  a: ProfileSplit,
  b: ProfileSplit,
  count: number,
  filter: (entry: FunctionTime) => boolean = () => true,
): { name: string; a: number; b: number }[] {
  const byName = new Map<string, { name: string; a: number; b: number }>();
  for (const entry of a.functions.filter(filter)) byName.set(entry.name, { name: entry.name, a: entry.micros, b: 0 });
  for (const entry of b.functions.filter(filter)) {
    const row = byName.get(entry.name) ?? { name: entry.name, a: 0, b: 0 };
    row.b = entry.micros;
    byName.set(entry.name, row);
  }
  return [...byName.values()].sort((x, y) => y.a - y.b - (x.a - x.b)).slice(0, count);
}
