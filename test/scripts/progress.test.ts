// Progress lines of long commands (scripts/progress.ts): shown on a terminal, silent in CI and in pipes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Progress, isProgressShown, progressLine, type ProgressStream } from '../../scripts/progress.js';

function recorder(isTTY: boolean): ProgressStream & { text: string } {
  const stream = { isTTY, columns: 80, text: '', write: (t: string) => (stream.text += t) };
  return stream;
}

describe('progress', () => {
  const cases: Array<{ name: string; isTTY: boolean; env: Record<string, string>; want: boolean }> = [
    { name: 'a terminal outside CI shows it', isTTY: true, env: {}, want: true },
    { name: 'CI=true hides it', isTTY: true, env: { CI: 'true' }, want: false },
    { name: 'CI=1 hides it', isTTY: true, env: { CI: '1' }, want: false },
    { name: 'CI=false shows it', isTTY: true, env: { CI: 'false' }, want: true },
    { name: 'a pipe or file hides it', isTTY: false, env: {}, want: false },
  ];
  for (const c of cases) it(c.name, () => assert.equal(isProgressShown(recorder(c.isTTY), c.env), c.want));

  it('draws a bar with the count, and a plain count without a total', () => {
    assert.equal(progressLine('chaos', 3, 12, 'round 4'), 'chaos [######..................] 3/12 25% round 4');
    assert.equal(progressLine('demo', 2, null, ''), 'demo 2');
    assert.equal(progressLine('x', 1, 2, 'y'.repeat(200), 40).length, 39);
  });

  it('writes nothing at all where it is not shown, and prints the command lines unchanged', () => {
    const err = recorder(false);
    const out = recorder(false);
    const progress = new Progress('fuzz', 10, err, false);
    progress.update(5, 'HTTP');
    progress.print('a line of the command', out);
    progress.end();
    assert.equal(err.text, '');
    assert.equal(out.text, 'a line of the command\n');
  });

  it('on a terminal: redraws one line in place and clears it at the end', () => {
    const err = recorder(true);
    const progress = new Progress('bench:load', 2, err, true);
    progress.update(1, 'fanout');
    progress.update(2, 'done'); // the last step is drawn even within the redraw interval
    progress.end();
    assert.equal(
      err.text,
      '\r\x1b[2Kbench:load [############............] 1/2 50% fanout\r\x1b[2Kbench:load [########################] 2/2 100% done\r\x1b[2K',
    );
  });
});
