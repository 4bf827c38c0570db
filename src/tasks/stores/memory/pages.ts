/**
 * The memory store's ListTasks pages: a walk down one ordered index from just below the
 * cursor, or the single task of a context that holds only one.
 *
 * @example
 * ```ts
 * const page = readPage(owned.all, 50, undefined, undefined);
 * ```
 */
import type { TaskPage } from '../../store.js';
import { encodePageToken } from '../page-token.js';
import type { Entry } from './entries.js';
import { compareKeys, type SortedIndex, type SortKey } from './sorted-index.js';

/**
 * Walks the index downwards from just below the cursor. One item past the page is peeked
 * at so that the last page gets `''` rather than a token leading to an empty page.
 *
 * @example
 * ```ts
 * readPage(index, query.pageSize, query.statusTimestampAfter, cursor);
 * ```
 */
export function readPage(
  index: SortedIndex<Entry>,
  pageSize: number,
  floorMs: number | undefined,
  cursor: SortKey | undefined,
): TaskPage {
  const totalSize =
    floorMs === undefined ? index.size : index.countFrom(index.lowerBound({ statusMs: floorMs, id: '' }));
  const start = cursor === undefined ? index.end() : index.lowerBound(cursor);
  const page: Entry[] = [];
  let more = false;
  for (const entry of index.descendingBefore(start)) {
    if (floorMs !== undefined && entry.statusMs < floorMs) break;
    if (page.length === pageSize) {
      more = true;
      break;
    }
    page.push(entry);
  }
  const last = page[page.length - 1];
  return {
    tasks: page.map((entry) => entry.readTask()),
    nextPageToken: more && last !== undefined ? encodePageToken(last) : '',
    totalSize,
  };
}

/**
 * {@link readPage} for a context holding a single task that matches the state filter: a page
 * size is at least 1, so the page is that task or nothing, and there is never a next page.
 *
 * @example
 * ```ts
 * readSingle(entry, query.statusTimestampAfter, cursor);
 * ```
 */
export function readSingle(entry: Entry, floorMs: number | undefined, cursor: SortKey | undefined): TaskPage {
  const matches = floorMs === undefined || entry.statusMs >= floorMs;
  const shown = matches && (cursor === undefined || compareKeys(entry, cursor) < 0);
  return { tasks: shown ? [entry.readTask()] : [], nextPageToken: '', totalSize: matches ? 1 : 0 };
}
