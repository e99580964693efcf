// An owner's thread on a shard node (shard-node-worker.ts). Its links to the other owners: those of its own
// node by the ports between their threads (engine/peer-links.ts, as in one process), the rest over NATS
// (nats-links.ts). A fill whose maker's account is on another owner of the same node then locks it without
// nats-server on the way (two wake-ups and its hop less each way). Both transports give the owners' protocol
// what it asks (in order, never twice, possibly lost), and a pair of owners always uses the same one: which
// owners share a node is fixed for the node's life (its threads start and stop together).
import type { MessagePort } from 'node:worker_threads';
import type { NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { PeerMessage } from '../engine/owner.js';
import { PeerLinks, type OwnerLinks } from '../engine/peer-links.js';
import { NatsLinks } from './nats-links.js';

export class NodeLinks implements OwnerLinks {
  readonly #local: PeerLinks;
  readonly #remote: NatsLinks;

  constructor(
    nc: NatsConnection,
    self: number,
    /** This owner's end of a port to each other owner of its node, by owner. */
    private readonly ports: ReadonlyMap<number, MessagePort>,
    deliver: (from: number, message: PeerMessage) => void,
    log: Logger,
  ) {
    this.#local = new PeerLinks(self, ports, deliver);
    this.#remote = new NatsLinks(nc, self, deliver, log);
  }

  send(to: number, message: PeerMessage): void {
    if (this.ports.has(to)) this.#local.send(to, message);
    else this.#remote.send(to, message);
  }

  close(): void {
    this.#local.close();
    this.#remote.close();
  }
}
