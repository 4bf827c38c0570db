/**
 * A ledger of outbound mirrors in one small JSON file, for callers that live across processes:
 * `airlock send` runs once per command, and a follow-up (`--task ID`) in a later run must find
 * the task the earlier run started, or the ownership check answers `task_not_found`.
 *
 * The file holds what a mirror holds (owner, ids, state, agent name; never a prompt or a
 * reply), the newest `maxTasks` rows (default 1000). Writes re-read the file, change one row
 * and replace it atomically (temp file in the same directory, fsync, rename), mode 0600 in a
 * 0700 directory; writes within one process are serialised. Two processes writing at the same
 * moment may lose one row: that caller's follow-up is then refused as `task_not_found`, never
 * accepted for a task it did not start. A file that is not a ledger is an error (logged by the
 * caller, and every ownership check fails closed), never "empty".
 *
 * @example
 * ```ts
 * const ledger = new FileOutboundLedger('.airlock/outbound-tasks.json');
 * await ledger.record('client:local::', mirror);
 * await ledger.get('client:local::', mirror.id); // the mirror
 * ```
 */
import { readFile } from 'node:fs/promises';
import type { Task } from '../protocol/model.js';
import { TASK_STATES, type TaskState } from '../protocol/model.js';
import type { OutboundLedger } from './bookkeeping.js';
import { readStateBody, writeStateFile } from '../state/file.js';

const FILE_VERSION = 1;
/** A ledger row is a few hundred bytes; anything much larger than maxTasks rows is not ours. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const STATES: ReadonlySet<string> = new Set<string>(TASK_STATES);

/**
 * One row of the ledger file: the owner's principal key and the mirror.
 *
 * @example
 * ```ts
 * const row: LedgerRow = { owner: 'client:local::', task: mirror };
 * ```
 */
export interface LedgerRow {
  owner: string;
  task: Task;
}

/**
 * Options of a {@link FileOutboundLedger}.
 *
 * @example
 * ```ts
 * new FileOutboundLedger(path, { maxTasks: 200 });
 * ```
 */
export interface FileOutboundLedgerOptions {
  /** Rows kept; the oldest go first. Default 1000. */
  maxTasks?: number;
}

/**
 * The file-backed {@link OutboundLedger}. Lookups are scoped by owner.
 *
 * @example
 * ```ts
 * const ledger = new FileOutboundLedger(join(stateDir, 'outbound-tasks.json'));
 * ```
 */
export class FileOutboundLedger implements OutboundLedger {
  readonly path: string;
  readonly #maxTasks: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string, options: FileOutboundLedgerOptions = {}) {
    this.path = path;
    this.#maxTasks = Math.max(1, Math.floor(options.maxTasks ?? 1000));
  }

  async get(principalKey: string, id: string): Promise<Task | undefined> {
    const rows = await this.#load();
    return rows.find((row) => row.owner === principalKey && row.task.id === id)?.task;
  }

  /** Every mirror `principalKey` owns, oldest first. */
  async list(principalKey: string): Promise<Task[]> {
    return (await this.#load()).filter((row) => row.owner === principalKey).map((row) => row.task);
  }

  record(principalKey: string, mirror: Task): Promise<void> {
    const run = this.#queue.then(
      () => this.#rewrite(principalKey, mirror),
      () => this.#rewrite(principalKey, mirror),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #rewrite(principalKey: string, mirror: Task): Promise<void> {
    const rows = (await this.#load()).filter((row) => !(row.owner === principalKey && row.task.id === mirror.id));
    // Newest last: a replaced mirror moves to the end, and the oldest rows go first.
    rows.push({ owner: principalKey, task: slim(mirror) });
    const kept = rows.slice(Math.max(0, rows.length - this.#maxTasks));
    await this.#write(`${JSON.stringify({ version: FILE_VERSION, tasks: kept }, null, 1)}\n`);
  }

  async #load(): Promise<LedgerRow[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return parseLedgerFile(text, this.path);
  }

  async #write(text: string): Promise<void> {
    await writeStateFile(this.path, text);
  }
}

/** Only what a mirror is meant to hold, whatever else the object carried. */
function slim(task: Task): Task {
  return {
    id: task.id,
    contextId: task.contextId,
    status: { state: task.status.state, timestamp: task.status.timestamp },
    artifacts: [],
    history: [],
    ...(task.metadata !== undefined && { metadata: task.metadata }),
  };
}

/**
 * Reads a ledger file's text; throws naming the file for anything that is not one.
 *
 * @example
 * ```ts
 * parseLedgerFile('{"version":1,"tasks":[]}', 'outbound-tasks.json'); // []
 * ```
 */
export function parseLedgerFile(text: string, path: string): LedgerRow[] {
  const fail = (problem: string): Error => new Error(`The outbound task file ${path} is not valid: ${problem}`);
  const tasks = readStateBody(
    text,
    { version: FILE_VERSION, key: 'tasks', shape: 'array', maxBytes: MAX_FILE_BYTES },
    fail,
  );
  return tasks.map((raw, index) => {
    const row = readRow(raw);
    if (row === undefined) throw fail(`row ${index} is malformed`);
    return row;
  });
}

function readRow(raw: unknown): LedgerRow | undefined {
  if (!isRecord(raw) || typeof raw.owner !== 'string' || !isRecord(raw.task)) return undefined;
  const { id, contextId, status, metadata } = raw.task;
  if (typeof id !== 'string' || typeof contextId !== 'string' || !isRecord(status)) return undefined;
  if (typeof status.state !== 'string' || !STATES.has(status.state)) return undefined;
  if (typeof status.timestamp !== 'string' || status.timestamp.length > 40) return undefined;
  if (metadata !== undefined && !isRecord(metadata)) return undefined;
  const meta = metadata as Task['metadata'];
  return {
    owner: raw.owner,
    task: {
      id,
      contextId,
      status: { state: status.state as TaskState, timestamp: status.timestamp },
      artifacts: [],
      history: [],
      ...(meta !== undefined && { metadata: meta }),
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
