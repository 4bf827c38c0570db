/**
 * A session's conversation as a model backend replays it: read from the tasks the store holds,
 * so it lasts exactly as long as they do and needs no table of its own on any store.
 *
 * @example
 * ```ts
 * const entries = await readSessionHistory(store, owner, task, { maxTurns: 10, maxChars: 16_000 });
 * // [{ role: 'user', text: 'Trains to Lyon?' }, { role: 'agent', text: 'Three a day.' }, …]
 * ```
 */
import type { SessionEntry, SessionHistoryLimits } from '../agents/backend.js';
import type { Message, Task } from '../protocol/model.js';
import type { TaskStore } from './store.js';

/** ListTasks' largest page: more earlier tasks than this are never replayed. */
const MAX_PRIOR_TASKS = 100;

/**
 * The conversation before the current message of `current`: earlier tasks of the same owner in
 * the same context (oldest first), then the earlier messages of `current`, bounded by `limits`.
 *
 * @example
 * ```ts
 * await readSessionHistory(store, 'client:a::@writer', task, { maxTurns: 0, maxChars: 1000 }); // []
 * ```
 */
export async function readSessionHistory(
  store: TaskStore,
  owner: string,
  current: Task,
  limits: SessionHistoryLimits,
): Promise<SessionEntry[]> {
  if (limits.maxTurns <= 0 || limits.maxChars <= 0) return [];
  // Newest first; one more than needed because the current task is in the page too.
  const page = await store.list(owner, {
    contextId: current.contextId,
    pageSize: Math.min(MAX_PRIOR_TASKS, limits.maxTurns + 1),
  });
  const prior = page.tasks.filter((task) => task.id !== current.id).reverse();
  return boundSessionHistory(sessionEntries(prior, current), limits);
}

/**
 * Every text message of the earlier tasks, each followed by its reply artifacts, then the
 * current task's messages before its newest one (and the artifacts it already produced).
 *
 * @example
 * ```ts
 * sessionEntries([], task); // the messages of `task` before its newest one
 * ```
 */
export function sessionEntries(prior: readonly Task[], current: Task): SessionEntry[] {
  const entries: SessionEntry[] = [];
  for (const task of prior) appendTask(entries, task, task.history.length);
  appendTask(entries, current, current.history.length - 1);
  return entries;
}

function appendTask(entries: SessionEntry[], task: Task, messageCount: number): void {
  let lastRole: SessionEntry['role'] | undefined;
  for (let index = 0; index < messageCount; index += 1) {
    const message = task.history[index] as Message;
    const text = textOfParts(message.parts);
    if (text.length === 0) continue;
    lastRole = message.role === 'user' ? 'user' : 'agent';
    entries.push({ role: lastRole, text });
  }
  // The reply itself lives in artifacts; a final status message (if any) is in the history already.
  let reply = '';
  for (const artifact of task.artifacts) {
    const text = textOfParts(artifact.parts);
    if (text.length > 0) reply = reply.length === 0 ? text : `${reply}\n${text}`;
  }
  if (reply.length === 0) return;
  // Put the reply after the user message it answers, before a closing status message.
  const last = entries[entries.length - 1];
  if (lastRole === 'agent' && last !== undefined && last.role === 'agent' && messageCount === task.history.length) {
    entries.splice(entries.length - 1, 0, { role: 'agent', text: reply });
  } else {
    entries.push({ role: 'agent', text: reply });
  }
}

/**
 * The newest entries within the limits: at most `maxTurns` user entries (with the agent entries
 * after each), at most `maxChars` characters; when the oldest entry kept does not fit whole, its
 * tail is kept. Agent entries before the first user entry kept are dropped.
 *
 * @example
 * ```ts
 * boundSessionHistory([{ role: 'user', text: 'hello' }], { maxTurns: 1, maxChars: 3 }); // [{ role: 'user', text: 'llo' }]
 * ```
 */
export function boundSessionHistory(entries: readonly SessionEntry[], limits: SessionHistoryLimits): SessionEntry[] {
  const kept: SessionEntry[] = [];
  let turns = 0;
  let chars = 0;
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const entry = entries[index] as SessionEntry;
    if (entry.role === 'user') {
      if (turns === limits.maxTurns) break;
      turns += 1;
    }
    const room = limits.maxChars - chars;
    if (room <= 0) break;
    if (entry.text.length > room) {
      kept.push({ role: entry.role, text: entry.text.slice(entry.text.length - room) });
      break;
    }
    kept.push(entry);
    chars += entry.text.length;
  }
  kept.reverse();
  // A model expects the conversation to open with the user.
  while (kept.length > 0 && (kept[0] as SessionEntry).role === 'agent') kept.shift();
  return kept;
}

function textOfParts(parts: Message['parts']): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text' && part.text.length > 0) out = out.length === 0 ? part.text : `${out}\n${part.text}`;
  }
  return out;
}
