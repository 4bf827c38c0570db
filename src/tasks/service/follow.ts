/**
 * Stream fan-out: one caller's stream of a task's events, read off the bus. A send's stream
 * ends with its turn; a subscription's only when the task ends, and for a task running on
 * another replica it waits for the store to agree (see Replicas).
 *
 * @example
 * ```ts
 * const stream = followTask(bus, replicas, task.id);
 * stream.first({ kind: 'task', task });
 * return stream.events;
 * ```
 */
import { isTerminalState, type StreamEvent } from '../../protocol/model.js';
import { DEFAULT_EVENT_QUEUE_MAX_ITEMS, EventQueue } from '../queue.js';
import type { TaskEventBus } from '../events.js';
import type { Replicas } from './replicas.js';

/**
 * A caller's stream of one task: `first` puts the snapshot ahead of every update (once).
 *
 * @example
 * ```ts
 * const { first, events }: TaskStream = followTask(bus, replicas, id, 'terminal');
 * ```
 */
export interface TaskStream {
  first: (event: StreamEvent) => void;
  events: AsyncIterable<StreamEvent>;
}

/**
 * A stream of a task's events. It ends after the turn's final status event (`'pause'`: a
 * send's stream) or only once the task is terminal (`'terminal'`: a subscription, where an
 * interrupted state is not the end, so its `final` flag is cleared). With `remoteOwner`, the
 * task runs on another replica and the store is watched too. At most `maxPending` events wait
 * for the caller; past that the caller is dropped (see EventQueue).
 *
 * @example
 * ```ts
 * const stream = followTask(bus, replicas, id, 'terminal', owner);
 * ```
 */
export function followTask(
  bus: TaskEventBus,
  replicas: Replicas,
  taskId: string,
  until: 'pause' | 'terminal' = 'pause',
  remoteOwner?: string,
  maxPending: number = DEFAULT_EVENT_QUEUE_MAX_ITEMS,
): TaskStream {
  // Bounded: a caller that lets too many events wait is dropped (its next pull throws
  // EventQueueOverflowError) and stops listening; the task goes on and GetTask still reads it.
  const queue = new EventQueue<StreamEvent>({ maxItems: maxPending, onOverflow: () => stop() });
  const onEvent = (event: StreamEvent): void => {
    if (event.kind !== 'status-update') {
      queue.push(event);
      return;
    }
    const ends = until === 'pause' ? event.final : isTerminalState(event.status.state);
    const shown = ends === event.final ? event : { ...event, final: ends };
    if (!ends) {
      queue.push(shown);
      return;
    }
    stop();
    if (remoteOwner === undefined) {
      queue.push(shown);
      queue.end();
      return;
    }
    // Another replica's final event travels ahead of its store write: the stream ends once
    // the store agrees (at most a second later), so that a GetTask right after it agrees too.
    void replicas.storedTerminal(remoteOwner, taskId, Date.now() + 1_000).then(() => {
      queue.push(shown);
      queue.end();
    });
  };
  const stopListening = bus.subscribe(taskId, onEvent);
  let watch: NodeJS.Timeout | undefined;
  const stop = (): void => {
    stopListening();
    clearInterval(watch);
  };
  if (remoteOwner !== undefined) {
    watch = replicas.watchStored(remoteOwner, taskId, onEvent, () => {
      stop();
      queue.end();
    });
  }
  let firstSent = false;
  const events: AsyncIterable<StreamEvent> = {
    [Symbol.asyncIterator]: () => {
      const inner = queue[Symbol.asyncIterator]();
      return {
        next: () => inner.next(),
        return: async (value?: unknown) => {
          // The caller went away: stop listening. The task itself keeps running.
          stop();
          queue.end();
          return { done: true, value: value as StreamEvent };
        },
      };
    },
  };
  return {
    first: (event) => {
      if (firstSent) return;
      firstSent = true;
      queue.push(event);
    },
    events,
  };
}
