/**
 * The worker thread of ./off-thread.ts: checks the registry document it is given (`workerData`)
 * against the registry schema and posts the outcome back. It loads TypeBox so that the serving
 * thread does not.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkRegistryDocument } from './schema.js';

parentPort?.postMessage(checkRegistryDocument(workerData as Record<string, unknown>));
