// An owner's links to owners in other processes, over core NATS (engine/peer-links.ts is the same between
// threads of one process). What one owner sends a peer in one synchronous run leaves as one message of
// [from, batch] on the peer's subject. Core NATS delivers a publisher's messages to a subscriber in order and
// at most once: it never redelivers, and what was on its way when a connection broke is lost. That is what the
// owners' protocol asks of its transport (docs/engine.md): channel commands are resent until acknowledged and
// applied once; lock requests and fate questions must not be duplicated, and a lost one is asked again.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import { Batcher } from '../lib/batcher.js';
import type { OwnerLinks } from '../engine/peer-links.js';
import type { PeerMessage } from '../engine/owner.js';
import { decode, encode, subjects } from './wire.js';

/**
 * Messages per NATS message, at most: a peer message encodes in well under 200 bytes, so a batch stays far
 * below nats-server's default 1 MiB max_payload whatever the owner sent in one run (resends come 256 a tick).
 */
const MESSAGES_PER_PUBLISH = 1_024;

export class NatsLinks implements OwnerLinks {
  readonly #out = new Map<number, Batcher<PeerMessage>>();
  readonly #subscription: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    readonly self: number,
    deliver: (from: number, message: PeerMessage) => void,
    private readonly log: Logger,
  ) {
    this.#subscription = nc.subscribe(subjects.ownerPeer(self), {
      callback: (error, msg) => {
        if (error !== null) return log.warn({ err: error }, 'owner peer subscription error');
        const [from, batch] = decode<[number, PeerMessage[]]>(msg.data);
        for (const message of batch) deliver(from, message);
      },
    });
  }

  send(to: number, message: PeerMessage): void {
    let out = this.#out.get(to);
    if (out === undefined) this.#out.set(to, (out = new Batcher((batch) => this.#publish(to, batch))));
    out.add(message);
  }

  #publish(to: number, batch: PeerMessage[]): void {
    for (let from = 0; from < batch.length; from += MESSAGES_PER_PUBLISH) {
      try {
        this.nc.publish(subjects.ownerPeer(to), encode([this.self, batch.slice(from, from + MESSAGES_PER_PUBLISH)]));
      } catch (error) {
        // A closed or draining connection: what was not sent is lost, as on a broken link, and resent by the
        // owners' protocol when it is a channel command.
        this.log.warn({ err: error, to }, 'a peer message could not be published');
        return;
      }
    }
  }

  close(): void {
    queueMicrotask(() => this.#subscription.unsubscribe());
  }
}
