/**
 * The turn object a backend is handed (`AgentTurn`), and the source of its events. Built once
 * per turn on the hot path: its derived properties are lazy accessors, shaped for V8 (see
 * below), so a backend that never reads them costs nothing for them.
 *
 * @example
 * ```ts
 * const source = openSource(ctx, live, false, store);
 * const first = source.sync ? source.iterator.next() : await source.iterator.next();
 * closeSource(source);
 * ```
 */
import type { AgentTurn, ApprovedAction, DeniedAction, PersonAnswer } from '../../agents/backend.js';
import type { TurnToolbox } from '../../agents/tools.js';
import { outboundSubjectOf } from '../../identity/delegation.js';
import type { CallContext } from '../call-context.js';
import type { TurnPrompt } from '../policy.js';
import { deriveSessionId } from '../session.js';
import { readSessionHistory } from '../session-history.js';
import type { TaskStore } from '../store.js';
import { signalOf, type LiveTask, type TurnSource } from './live.js';

/** The turn as the bridge builds it: its lazy properties read this state (see newTurn). */
interface BridgeTurn extends AgentTurn {
  readonly [TURN_STATE]: TurnState;
}

/** What a turn's lazy properties are derived from. */
interface TurnState {
  readonly ctx: CallContext;
  readonly live: LiveTask;
  sessionId: string | undefined;
  prompt: TurnPrompt | undefined;
  readonly buildPrompt: (() => TurnPrompt) | undefined;
  readonly store: TaskStore;
  history: AgentTurn['history'];
}

const TURN_STATE = Symbol('airlock.turnState');

/**
 * Builds the turn and asks the backend for its events: synchronously when it offers them so
 * (`runSync`). Throws what a backend throws before its first event.
 *
 * @example
 * ```ts
 * live.source = openSource(ctx, live, resuming, store);
 * ```
 */
export function openSource(ctx: CallContext, live: LiveTask, resuming: boolean, store: TaskStore): TurnSource {
  const turn = newTurn(ctx, live, resuming, store);
  const backend = ctx.backend;
  return backend.runSync !== undefined
    ? { sync: true, iterator: backend.runSync(turn)[Symbol.iterator]() }
    : { sync: false, iterator: backend.run(turn)[Symbol.asyncIterator]() };
}

/**
 * Lets the backend run its `finally` blocks; it may already be finished.
 *
 * @example
 * ```ts
 * closeSource(source); // never throws, never rejects
 * ```
 */
export function closeSource(source: TurnSource): void {
  if (source.sync) {
    try {
      source.iterator.return?.();
    } catch {
      /* the turn is over: a failing clean-up changes nothing */
    }
    return;
  }
  void Promise.resolve(source.iterator.return?.()).catch(() => undefined);
}

/**
 * The turn's derived properties are own accessors whose getters are these shared functions.
 * Getters written in an object literal would be new closures per turn, held by accessor records
 * that V8 allocates in the old generation: every young object those closures reach (the whole
 * task) would then survive young-generation collections and be promoted, and cost a major
 * collection later. Own and enumerable (sessionId, signal), so `{ ...turn }` still copies them.
 */
const SESSION_ID_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  // Derived on first use: most turns of simple backends never ask for it.
  get(this: BridgeTurn): string {
    const state = this[TURN_STATE];
    return (state.sessionId ??= deriveSessionId(state.ctx.principalKey, state.ctx.agentSlug, this.contextId));
  },
};
const SIGNAL_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  // Created on first read: see LiveTask.controller.
  get(this: BridgeTurn): AbortSignal {
    return signalOf(this[TURN_STATE].live);
  },
};
/**
 * Not enumerable: `{ ...turn }` copies the live signal but would copy `aborted` as a frozen
 * value, so a copy leaves it out and `isAborted` reads the copy's signal instead.
 */
const ABORTED_ACCESSOR: PropertyDescriptor = {
  enumerable: false,
  configurable: true,
  get(this: BridgeTurn): boolean {
    return this[TURN_STATE].live.aborted;
  },
};

/**
 * The session's earlier conversation, read from the store when asked (see AgentTurn.history). A
 * function bound on first read, so that `const { history } = turn` works too.
 */
const HISTORY_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: BridgeTurn): AgentTurn['history'] {
    const state = this[TURN_STATE];
    const { live, store } = state;
    return (state.history ??= (limits) => readSessionHistory(store, live.owner, live.task, limits));
  },
};

/** The framed prompt, built on first read (see TurnGrant.prompt). */
const PROMPT_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: BridgeTurn): TurnPrompt | undefined {
    const state = this[TURN_STATE];
    if (state.prompt === undefined && state.buildPrompt !== undefined) state.prompt = state.buildPrompt();
    return state.prompt;
  },
};

/**
 * The turn for the live task's newest message, with what its grant gives it (prompt, tools).
 *
 * @example
 * ```ts
 * const events = backend.run(newTurn(ctx, live, false, store));
 * ```
 */
export function newTurn(ctx: CallContext, live: LiveTask, resuming: boolean, store: TaskStore): AgentTurn {
  const task = live.task;
  const grant = live.grant;
  const state: TurnState = {
    ctx,
    live,
    sessionId: undefined,
    prompt: undefined,
    buildPrompt: grant?.prompt,
    store,
    history: undefined,
  };
  const turn = {
    taskId: task.id,
    contextId: task.contextId,
    message: live.turnMessage ?? task.history[task.history.length - 1],
    task,
    resumed: resuming,
    // Every inbound turn has a hop chain: a plain field of the literal, not a property added after.
    via: ctx.via,
    outboundSubject: outboundSubjectOf(ctx),
    [TURN_STATE]: state,
  };
  Object.defineProperty(turn, 'sessionId', SESSION_ID_ACCESSOR);
  Object.defineProperty(turn, 'signal', SIGNAL_ACCESSOR);
  Object.defineProperty(turn, 'aborted', ABORTED_ACCESSOR);
  Object.defineProperty(turn, 'history', HISTORY_ACCESSOR);
  if (grant?.prompt !== undefined) Object.defineProperty(turn, 'prompt', PROMPT_ACCESSOR);
  // Only the turns that resume a parked task carry these: the common turn's literal stays a plain
  // object literal (a conditional spread in it is compiled to a slower generic copy).
  const extra = turn as {
    approvedAction?: ApprovedAction;
    deniedAction?: DeniedAction;
    personAnswer?: PersonAnswer;
    tools?: TurnToolbox;
  };
  if (grant?.tools !== undefined) {
    const approved = live.approvedAction;
    const tools = grant.tools({
      ctx,
      taskId: task.id,
      contextId: task.contextId,
      ...(approved !== undefined && { approved }),
    });
    if (tools !== undefined) extra.tools = tools;
  }
  if (live.approvedAction !== undefined) extra.approvedAction = live.approvedAction;
  if (live.deniedAction !== undefined) extra.deniedAction = live.deniedAction;
  if (live.personAnswer !== undefined) extra.personAnswer = live.personAnswer;
  return turn as unknown as BridgeTurn;
}
