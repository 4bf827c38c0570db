/**
 * The worker thread of ./off-thread.ts: checks the interpolated document it is given
 * (`workerData`) against the config schema and posts the outcome back. It loads TypeBox so that
 * the serving thread does not.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { schemaCheckOutcome } from './schema-check.js';

parentPort?.postMessage(schemaCheckOutcome(workerData as Record<string, unknown>));
