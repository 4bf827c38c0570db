/**
 * The push-config service: create, get, list and delete a task's webhook configs, for the
 * caller that owns the task. It never sees a dialect's wire shape: requests and results are the
 * canonical ones (`PushConfigRequest` / `PushConfigResult`); the dialect version is only stored,
 * so that webhooks are later sent in the version the config was made in.
 *
 * Ownership: the task is checked first (`checkTask`, the task service's own lookup), so another
 * principal's task answers TaskNotFound exactly like a missing one; records are then read and
 * written under the caller's principal key only.
 *
 * @example
 * ```ts
 * const push = new PushService({ settings, records: new MemoryPushConfigs(), checkTask: (ctx, id) => tasks.get(ctx, id, 0) });
 * const result = await push.handle(ctx, { op: 'create', taskId, config: { url: 'https://hooks.example/a2a' } }, '1.0');
 * ```
 */
import { randomUUID } from 'node:crypto';
import { A2AError } from '../protocol/errors.js';
import {
  isTerminalState,
  type PushConfigInput,
  type PushConfigRequest,
  type PushConfigResult,
  type Task,
  type TaskPushConfig,
} from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import type { PushConfigRecord, PushConfigRecords } from '../tasks/stores/push-records.js';
import type { PushSettings } from './config.js';
import { checkPushConfig } from './validate.js';

/**
 * What the service needs.
 *
 * @example
 * ```ts
 * const options: PushServiceOptions = { settings, records, checkTask: (ctx, id) => tasks.get(ctx, id, 0) };
 * ```
 */
export interface PushServiceOptions {
  settings: PushSettings;
  records: PushConfigRecords;
  /** The caller's task at this agent; throws TaskNotFound for a missing or another caller's task. */
  checkTask: (ctx: CallContext, taskId: string) => Promise<Task>;
  /** Told of every config stored for a task that is not finished: delivery watches its events. */
  watch?: (ctx: CallContext, taskId: string) => void;
  /**
   * Told of each inline config once stored, with the task as it is then: the turn may have
   * ended before (a quick blocking send), and its final event must still reach the config.
   */
  inlineStored?: (task: Task, configId: string) => Promise<void>;
  /** Mints config ids; random UUIDs by default. */
  newId?: () => string;
  now?: () => number;
}

/** The dialect a config was created in. */
export type PushDialect = PushConfigRecord['dialect'];

/**
 * Push-config operations for one gateway.
 *
 * @example
 * ```ts
 * await push.handle(ctx, { op: 'list', taskId }, '0.3'); // { op: 'list', configs: [...], nextPageToken: '' }
 * ```
 */
export class PushService {
  readonly #options: PushServiceOptions;
  readonly #newId: () => string;
  readonly #now: () => number;

  constructor(options: PushServiceOptions) {
    this.#options = options;
    this.#newId = options.newId ?? randomUUID;
    this.#now = options.now ?? Date.now;
  }

  /** Runs one push-config operation for the caller. Throws `A2AError`. */
  async handle(ctx: CallContext, request: PushConfigRequest, dialect: PushDialect): Promise<PushConfigResult> {
    // Ownership before anything else: a stranger learns nothing, not even that the input was bad.
    const task = await this.#options.checkTask(ctx, request.taskId);
    const { records } = this.#options;
    const owner = ctx.principalKey;
    switch (request.op) {
      case 'create':
        return { op: 'create', config: await this.#create(ctx, task, request.config, dialect) };
      case 'get': {
        const record =
          request.id === undefined
            ? (await records.list(request.taskId, owner))[0]
            : await records.get(request.taskId, owner, request.id);
        if (record === undefined) throw new A2AError('TASK_NOT_FOUND', 'Push notification config not found');
        return { op: 'get', config: record.config };
      }
      case 'list':
        return this.#list(owner, request.taskId, request.pageSize, request.pageToken);
      case 'delete':
        // Idempotent: deleting a config that is not there (any more) succeeds, as in the SDKs.
        await records.delete(request.taskId, owner, request.id);
        return { op: 'delete' };
    }
  }

  /**
   * Checks an inline config (SendMessage `configuration`) before the turn starts, so a refused
   * webhook refuses the send. Throws INVALID_PARAMS naming the field.
   */
  checkInline(config: PushConfigInput): void {
    checkPushConfig(config, this.#options.settings);
  }

  /** Stores an inline config once its task exists; the caller already owns the task. */
  async registerInline(
    ctx: CallContext,
    taskId: string,
    config: PushConfigInput,
    dialect: PushDialect,
  ): Promise<TaskPushConfig> {
    const stored = await this.#create(ctx, await this.#options.checkTask(ctx, taskId), config, dialect);
    const { inlineStored } = this.#options;
    // Read again after the write: a final event published before it found no config to go to.
    if (inlineStored !== undefined) await inlineStored(await this.#options.checkTask(ctx, taskId), stored.id);
    return stored;
  }

  async #create(ctx: CallContext, task: Task, input: PushConfigInput, dialect: PushDialect): Promise<TaskPushConfig> {
    const { settings, records } = this.#options;
    const owner = ctx.principalKey;
    const taskId = task.id;
    checkPushConfig(input, settings);
    const config: TaskPushConfig = { ...input, id: input.id ?? this.#newId(), taskId };
    const made = { agent: ctx.agentSlug, ...(ctx.caller !== undefined && { client: ctx.caller.clientId }) };
    const outcome = await records.put(
      { owner, dialect, createdAt: this.#now(), config, ...made },
      { perTask: settings.maxConfigsPerTask, perPrincipal: settings.maxConfigsPerPrincipal },
    );
    if (outcome === 'per-task-cap') {
      throw new A2AError(
        'INVALID_PARAMS',
        `This task has the most push notification configs allowed (${settings.maxConfigsPerTask}); delete one first`,
      );
    }
    if (outcome === 'per-principal-cap') {
      throw new A2AError(
        'INVALID_PARAMS',
        `You have the most push notification configs allowed (${settings.maxConfigsPerPrincipal}); delete some first`,
      );
    }
    // A finished task publishes nothing more: its config is kept (and listed) but not watched.
    if (!isTerminalState(task.status.state)) this.#options.watch?.(ctx, taskId);
    return config;
  }

  async #list(owner: string, taskId: string, pageSize?: number, pageToken?: string): Promise<PushConfigResult> {
    const all = await this.#options.records.list(taskId, owner);
    const start = pageToken === undefined ? 0 : readPageToken(pageToken, all.length);
    const end = pageSize === undefined ? all.length : Math.min(all.length, start + pageSize);
    return {
      op: 'list',
      configs: all.slice(start, end).map((record) => record.config),
      nextPageToken: end < all.length ? String(end) : '',
    };
  }
}

/** A page token is the offset of the next config; anything else is refused. */
function readPageToken(token: string, total: number): number {
  const offset = /^[0-9]{1,6}$/.test(token) ? Number(token) : Number.NaN;
  if (!(offset >= 0 && offset <= total)) {
    throw new A2AError('INVALID_PARAMS', 'Invalid params: pageToken is not a token this server issued', {
      field: 'pageToken',
    });
  }
  return offset;
}
