// A TCP relay in front of the service whose links can go silent without closing, the way a half-open link
// does (a dead NAT entry, a pulled cable): neither end gets a byte, a FIN or a RST, so only a liveness check
// can tell. Used to test how the maker SDK notices a dead link.
//
//   const relay = await startFreezableRelay(server.port);
//   const mm = new MakerClient({ url: relay.url, ... });
//   relay.freeze();           // every current link goes silent, its sockets stay open
//   ...                       // new connections still relay normally, so a reconnect gets through
//   await relay.close();
import net from 'node:net';

export interface FreezableRelay {
  /** `ws://127.0.0.1:<port>`, for the SDK's `url`. */
  readonly url: string;
  /** Connections accepted so far (each reconnect through the relay adds one). */
  readonly acceptedCount: number;
  /** Frozen links whose client side is still open (the client has not yet given its socket up). */
  readonly frozenOpenCount: number;
  /** Stops forwarding bytes both ways on every current link; keeps their sockets open. Later links are not frozen. */
  freeze(): void;
  /** Destroys every socket and stops listening. */
  close(): Promise<void>;
}

interface Link {
  /** The client's side. */
  inbound: net.Socket;
  isFrozen: boolean;
}

export async function startFreezableRelay(targetPort: number): Promise<FreezableRelay> {
  const links = new Set<Link>();
  const frozenInbound = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();
  let acceptedCount = 0;
  const relay = net.createServer((inbound) => {
    acceptedCount++;
    const outbound = net.connect(targetPort, '127.0.0.1');
    const link: Link = { inbound, isFrozen: false };
    links.add(link);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        links.delete(link);
        frozenInbound.delete(socket);
      });
      socket.on('error', () => {}); // a peer that gives up on a frozen link resets it; that is expected here
    }
    forward(inbound, outbound, link);
    forward(outbound, inbound, link);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(relay.address() as net.AddressInfo).port}`,
    get acceptedCount() {
      return acceptedCount;
    },
    get frozenOpenCount() {
      return frozenInbound.size;
    },
    freeze() {
      for (const link of links) {
        link.isFrozen = true;
        frozenInbound.add(link.inbound);
      }
      links.clear(); // links made from now on relay normally
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        relay.close(() => resolve());
      }),
  };
}

/** Copies `from` to `to` while the link is live; once frozen, swallows the bytes and the close as well. */
function forward(from: net.Socket, to: net.Socket, link: Link): void {
  from.on('data', (chunk) => {
    if (!link.isFrozen) to.write(chunk);
  });
  from.on('close', () => {
    if (!link.isFrozen) to.destroy();
  });
}
