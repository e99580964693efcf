// The owners' threads. Peer messages (owner.ts PeerMessage: locks, channel commands and their acks, fate
// questions) between owners on threads of one process: one MessagePort per pair of owners, made by the thread
// that starts them (`peerPorts`) and transferred to both. A port between two worker threads carries messages
// straight from one to the other, in order and never twice, which is what the owners' protocol asks of its
// transport (docs/engine.md: lock requests and fate questions are not on the channel, so they must not be
// duplicated; a lost one is asked again). The main thread is not on the way. What one owner sends a peer
// in one synchronous run leaves as one message (Batcher).
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Batcher } from '../lib/batcher.js';
import type { PeerMessage } from './owner.js';

/** For each owner, its end of a port to every other owner, by peer index. */
export function peerPorts(owners: number): Array<Map<number, MessagePort>> {
  const ids = Array.from({ length: owners }, (_, owner) => owner);
  const ends = peerPortsOf(ids);
  return ids.map((owner) => ends.get(owner)!);
}

/** For each of `owners` (their ids: a shard node's, cluster/shard-node-main.ts), its end of a port to each other. */
export function peerPortsOf(owners: readonly number[]): Map<number, Map<number, MessagePort>> {
  const ends = new Map(owners.map((owner) => [owner, new Map<number, MessagePort>()]));
  for (const [i, a] of owners.entries()) {
    for (const b of owners.slice(i + 1)) {
      const { port1, port2 } = new MessageChannel();
      ends.get(a)!.set(b, port1);
      ends.get(b)!.set(a, port2);
    }
  }
  return ends;
}

/** An owner's way to its peers: in order, never twice, possibly lost (the owners' protocol resends). */
export interface OwnerLinks {
  send(to: number, message: PeerMessage): void;
  /** Stops listening: the owner may end. Messages sent before still leave. */
  close(): void;
}

export class PeerLinks implements OwnerLinks {
  readonly #out = new Map<number, Batcher<PeerMessage>>();

  constructor(
    readonly self: number,
    private readonly ports: ReadonlyMap<number, MessagePort>,
    onMessage: (from: number, message: PeerMessage) => void,
  ) {
    for (const [peer, port] of ports) {
      assert.notEqual(peer, self, 'no port to oneself');
      port.on('message', (batch: PeerMessage[]) => {
        for (const message of batch) onMessage(peer, message);
      });
      this.#out.set(peer, new Batcher((batch) => port.postMessage(batch)));
    }
  }

  send(to: number, message: PeerMessage): void {
    const out = this.#out.get(to);
    assert.ok(out !== undefined, `owner ${this.self} has no port to owner ${to}`);
    out.add(message);
  }

  /** Stops listening: the thread may end. Messages added before still leave (their batches flush first). */
  close(): void {
    queueMicrotask(() => {
      for (const port of this.ports.values()) port.close();
    });
  }
}
