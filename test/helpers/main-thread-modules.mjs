// Lists the modules a process's main thread loads: `node --import ./main-thread-modules.mjs …`
// with AIRLOCK_TEST_MODULE_LIST naming the file each module's URL is appended to. Worker threads
// run this preload too, and register nothing: what they load is not the serving isolate's.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

let listFile;

/** The hooks thread's setup: where to write. */
export function initialize(data) {
  listFile = data.file;
}

/** Every module the main thread loads, its URL on a line. */
export async function load(url, context, next) {
  appendFileSync(listFile, `${url}\n`);
  return next(url, context);
}

const file = process.env.AIRLOCK_TEST_MODULE_LIST;
if (isMainThread && file !== undefined && file !== '') register(import.meta.url, { data: { file } });
