// Any process. How every process of the cluster connects to NATS: named (the server's monitoring shows who
// is who), reconnecting forever (a restarted nats-server is found again within a tenth of a second of its
// return), and with pings a second apart, two of which may go unanswered: a peer whose connection died
// without a close (a host gone, a cable pulled) is noticed in about 3 s rather than NATS's default 4 minutes.
import type { ConnectionOptions } from 'nats';

export function natsOptions(name: string): ConnectionOptions {
  return { name, pingInterval: 1_000, maxPingOut: 2, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 100 };
}
