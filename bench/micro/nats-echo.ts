// Process entry, spawned by bench/micro/cluster-money.ts: a NATS responder that answers every request on
// subject `PARLAYD_ECHO_SUBJECT` with its own bytes, doing nothing else, so a request to it costs what core
// NATS request-reply between two Node processes costs and no more: the floor under every money call.
// Connects to `PARLAYD_NATS_URL` as the cluster's processes do (cluster/nats-options.ts), logs one JSON line
// with msg "listening" once its subscription is on the server, and stops on SIGTERM.
import { connect } from 'nats';
import { natsOptions } from '../../src/cluster/nats-options.js';

const url = process.env['PARLAYD_NATS_URL'];
const subject = process.env['PARLAYD_ECHO_SUBJECT'];
if (url === undefined || subject === undefined) {
  process.stderr.write('nats-echo: PARLAYD_NATS_URL and PARLAYD_ECHO_SUBJECT are required\n');
  process.exit(2);
}

const nc = await connect({ servers: url.split(','), ...natsOptions('bench-echo') });
nc.subscribe(subject, { callback: (error, msg) => error === null && msg.respond(msg.data) });
await nc.flush(); // the subscription is on the server: requests reach it from here on
console.log(JSON.stringify({ msg: 'listening', subject }));

process.once('SIGTERM', () => {
  void nc.drain().then(() => process.exit(0));
});
