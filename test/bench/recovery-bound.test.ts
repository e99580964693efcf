// The signed recovery bound (bench/load/recovery-bound-server.ts) is the figure that says how much of the
// `signed` target any implementation could reach here, so it must do the recovery it claims to do: every
// order the independent signer signed (test/fixtures/signing-vectors.json) is accepted, and an order whose bytes or signature do
// not match is refused. No timing is asserted (speed lives in bench/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnListening } from '../../bench/load/scenarios/ceiling.js';
import { signingVectors as vectors } from '../helpers/vectors.js';

async function post(port: number, order: Record<string, unknown>): Promise<number> {
  const answer = await fetch(`http://127.0.0.1:${port}/v1/rfq`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ order }),
  });
  await answer.arrayBuffer();
  return answer.status;
}

test('the recovery bound server accepts exactly the orders whose signature recovers to order.user', async () => {
  const { child, port } = await spawnListening('recovery-bound-server.js', ['200']);
  try {
    assert.ok(vectors.orders.length >= 3);
    for (const { order, signature_base64: signature } of vectors.orders) {
      assert.equal(await post(port, { ...order, signature }), 201, `vector with ${String(order.legs.length)} legs`);
      // Other bytes under the same signature recover some other address.
      assert.equal(await post(port, { ...order, wager_micros: order.wager_micros + 1, signature }), 400);
    }
    const [first, second] = vectors.orders;
    assert.equal(await post(port, { ...first!.order, signature: second!.signature_base64 }), 400);
  } finally {
    child.kill('SIGTERM');
  }
});
