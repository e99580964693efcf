// A worker that answers every message batch at once: the floor of one actor round trip across threads.
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', (batch: unknown[]) => parentPort!.postMessage(batch));
