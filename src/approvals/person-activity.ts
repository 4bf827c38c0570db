/**
 * What the console shows a person besides their pending actions and questions: the latest tasks
 * of the principals they answer for, and the audit rows about those tasks and their decisions.
 * Bounded per person and in people (the person seen least recently is forgotten first).
 *
 * @example
 * ```ts
 * const activity = new PersonActivity();
 * activity.observeTask('person:alice', event, clientOf(event.ctx), Date.now());
 * await desk.recentTasks('person:alice', 20);
 * ```
 */
import type { AuditEvent } from '../audit/events.js';
import type { TaskLifecycleEvent } from '../tasks/policy.js';
import type { PersonAuditRow, PersonTaskView } from './desk.js';

/** Per person: tasks remembered for the console, and audit rows. */
const TASKS_PER_PERSON = 50;
const ROWS_PER_PERSON = 100;
/** People remembered at once (the oldest is forgotten first). */
const MAX_PEOPLE = 10_000;

/**
 * The per-person task views and audit rows.
 *
 * @example
 * ```ts
 * activity.auditTail('person:alice', 50); // newest first
 * ```
 */
export class PersonActivity {
  /** userId → taskId → view (insertion order = age). */
  readonly #tasks = new Map<string, Map<string, PersonTaskView>>();
  /** userId → newest-last audit rows. */
  readonly #rows = new Map<string, PersonAuditRow[]>();
  /** taskId → userId, for routing audit rows to a person (bounded with #tasks). */
  readonly #taskPerson = new Map<string, string>();

  /** Remembers a step of a task of a principal `userId` answers for. */
  observeTask(userId: string, event: TaskLifecycleEvent, client: string, now: number): void {
    let tasks = this.#tasks.get(userId);
    if (tasks === undefined) {
      if (this.#tasks.size >= MAX_PEOPLE) this.#forgetOldestPerson();
      this.#tasks.set(userId, (tasks = new Map<string, PersonTaskView>()));
    }
    const time = new Date(now).toISOString();
    const previous = tasks.get(event.taskId);
    const view: PersonTaskView = {
      taskId: event.taskId,
      contextId: event.contextId,
      agent: event.ctx.agentSlug,
      client,
      state: event.type,
      createdAt: previous?.createdAt ?? time,
      updatedAt: time,
    };
    tasks.delete(event.taskId);
    tasks.set(event.taskId, view);
    this.#taskPerson.set(event.taskId, userId);
    if (tasks.size > TASKS_PER_PERSON) {
      const oldest = tasks.keys().next().value as string;
      tasks.delete(oldest);
      this.#taskPerson.delete(oldest);
    }
  }

  /** Keeps a row that names a person, or one of the tasks of a person's principals. */
  observeAuditRow(event: AuditEvent): void {
    const row = event as unknown as Record<string, unknown>;
    const user = typeof row.user === 'string' ? row.user : undefined;
    const taskId = typeof row.taskId === 'string' ? row.taskId : undefined;
    const userId = user ?? (taskId === undefined ? undefined : this.#taskPerson.get(taskId));
    if (userId === undefined) return;
    let rows = this.#rows.get(userId);
    if (rows === undefined) {
      if (this.#rows.size >= MAX_PEOPLE) this.#rows.delete(this.#rows.keys().next().value as string);
      this.#rows.set(userId, (rows = []));
    }
    rows.push(event);
    if (rows.length > ROWS_PER_PERSON) rows.splice(0, rows.length - ROWS_PER_PERSON);
  }

  /** The person's latest tasks, newest first (the desk adds each one's open action). */
  recentTasks(userId: string, limit: number): PersonTaskView[] {
    const tasks = this.#tasks.get(userId);
    if (tasks === undefined) return [];
    const out: PersonTaskView[] = [];
    for (const view of tasks.values()) out.push(view);
    out.reverse();
    return out.slice(0, Math.max(0, limit));
  }

  /** The person's latest audit rows, newest first. */
  auditTail(userId: string, limit: number): PersonAuditRow[] {
    const rows = this.#rows.get(userId) ?? [];
    return rows.slice(-Math.max(0, limit)).reverse();
  }

  #forgetOldestPerson(): void {
    const oldest = this.#tasks.keys().next().value as string;
    const tasks = this.#tasks.get(oldest);
    if (tasks !== undefined) for (const taskId of tasks.keys()) this.#taskPerson.delete(taskId);
    this.#tasks.delete(oldest);
  }
}
