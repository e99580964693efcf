// Load generator, main thread. A tiny SVG chart writer (no dependency): line charts with optional log
// axes, and bar charts. Enough to read a latency-vs-load curve or a throughput-vs-N bar at a glance in a
// browser or on GitHub; the numbers themselves are in the JSON and the summary table.

export interface Series {
  name: string;
  points: Array<[number, number]>;
}

export interface LineChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  isLogX?: boolean;
  isLogY?: boolean;
  /** Horizontal reference lines, e.g. a target. */
  marks?: Array<{ y: number; label: string }>;
}

export interface BarChartSpec {
  title: string;
  yLabel: string;
  bars: Array<{ label: string; value: number; note?: string }>;
}

const WIDTH = 720;
const HEIGHT = 420;
const PAD = { left: 70, right: 150, top: 40, bottom: 55 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (v: number) => (Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : String(Math.round(v * 100) / 100));

interface Axis {
  toPx(v: number): number;
  ticks: number[];
}

function axis(min: number, max: number, isLog: boolean, fromPx: number, toPx: number): Axis {
  if (isLog) {
    const lo = Math.floor(Math.log10(Math.max(min, 1e-6)));
    const hi = Math.ceil(Math.log10(Math.max(max, min * 10, 1e-6)));
    const ticks: number[] = [];
    for (let e = lo; e <= hi; e++)
      for (const m of [1, 2, 5]) if (m * 10 ** e >= 10 ** lo && m * 10 ** e <= 10 ** hi) ticks.push(m * 10 ** e);
    const span = hi - lo || 1;
    return { toPx: (v) => fromPx + ((Math.log10(Math.max(v, 10 ** lo)) - lo) / span) * (toPx - fromPx), ticks };
  }
  const top = niceCeil(max <= min ? min + 1 : max);
  const bottom = Math.min(0, min);
  const step = niceCeil((top - bottom) / 5);
  const ticks: number[] = [];
  for (let v = bottom; v <= top + step / 2; v += step) ticks.push(v);
  const end = ticks[ticks.length - 1] ?? top;
  return { toPx: (v) => fromPx + ((v - bottom) / (end - bottom || 1)) * (toPx - fromPx), ticks };
}

function niceCeil(x: number): number {
  if (x <= 0) return 1;
  const e = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * e >= x) return m * e;
  return 10 * e;
}

function frame(title: string, xLabel: string, yLabel: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="${PAD.left + (WIDTH - PAD.left - PAD.right) / 2}" y="${HEIGHT - 12}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${PAD.top + (HEIGHT - PAD.top - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
    ...body,
    `</svg>`,
    '',
  ].join('\n');
}

export function lineChart(spec: LineChartSpec): string {
  const points = spec.series.flatMap((s) => s.points);
  const xs = points.map((p) => p[0]);
  const ys = [...points.map((p) => p[1]), ...(spec.marks ?? []).map((m) => m.y)];
  const plotBottom = HEIGHT - PAD.bottom;
  const plotRight = WIDTH - PAD.right;
  const x = axis(Math.min(...xs, spec.isLogX === true ? Infinity : 0), Math.max(...xs, 1), spec.isLogX === true, PAD.left, plotRight);
  const y = axis(Math.min(...ys, spec.isLogY === true ? Infinity : 0), Math.max(...ys, 1e-3), spec.isLogY === true, plotBottom, PAD.top);
  const body: string[] = [];
  for (const t of y.ticks) {
    const py = y.toPx(t);
    body.push(`<line x1="${PAD.left}" x2="${plotRight}" y1="${py}" y2="${py}" stroke="#e5e5e5"/>`);
    body.push(`<text x="${PAD.left - 6}" y="${py + 4}" text-anchor="end">${fmt(t)}</text>`);
  }
  for (const t of x.ticks) {
    const px = x.toPx(t);
    body.push(`<line x1="${px}" x2="${px}" y1="${PAD.top}" y2="${plotBottom}" stroke="#f0f0f0"/>`);
    body.push(`<text x="${px}" y="${plotBottom + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  body.push(
    `<rect x="${PAD.left}" y="${PAD.top}" width="${plotRight - PAD.left}" height="${plotBottom - PAD.top}" fill="none" stroke="#888"/>`,
  );
  for (const mark of spec.marks ?? []) {
    const py = y.toPx(mark.y);
    body.push(`<line x1="${PAD.left}" x2="${plotRight}" y1="${py}" y2="${py}" stroke="#555" stroke-dasharray="5 4"/>`);
    body.push(`<text x="${plotRight + 4}" y="${py + 4}" fill="#555">${esc(mark.label)}</text>`);
  }
  spec.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const path = s.points.map(([px, py]) => `${x.toPx(px).toFixed(1)},${y.toPx(py).toFixed(1)}`).join(' ');
    body.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const [px, py] of s.points)
      body.push(`<circle cx="${x.toPx(px).toFixed(1)}" cy="${y.toPx(py).toFixed(1)}" r="3" fill="${color}"/>`);
    const ly = PAD.top + 14 + i * 18;
    body.push(`<line x1="${plotRight + 10}" x2="${plotRight + 30}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>`);
    body.push(`<text x="${plotRight + 34}" y="${ly}">${esc(s.name)}</text>`);
  });
  return frame(spec.title, spec.xLabel, spec.yLabel, body);
}

export function barChart(spec: BarChartSpec): string {
  const plotBottom = HEIGHT - PAD.bottom;
  const plotRight = WIDTH - PAD.right;
  const y = axis(0, Math.max(...spec.bars.map((b) => b.value), 1), false, plotBottom, PAD.top);
  const body: string[] = [];
  for (const t of y.ticks) {
    const py = y.toPx(t);
    body.push(`<line x1="${PAD.left}" x2="${plotRight}" y1="${py}" y2="${py}" stroke="#e5e5e5"/>`);
    body.push(`<text x="${PAD.left - 6}" y="${py + 4}" text-anchor="end">${fmt(t)}</text>`);
  }
  const slot = (plotRight - PAD.left) / Math.max(1, spec.bars.length);
  spec.bars.forEach((bar, i) => {
    const color = COLORS[i % COLORS.length]!;
    const x0 = PAD.left + i * slot + slot * 0.15;
    const top = y.toPx(bar.value);
    body.push(
      `<rect x="${x0.toFixed(1)}" y="${top.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${(plotBottom - top).toFixed(1)}" fill="${color}"/>`,
    );
    body.push(
      `<text x="${(x0 + slot * 0.35).toFixed(1)}" y="${(top - 5).toFixed(1)}" text-anchor="middle">${fmt(bar.value)}${bar.note === undefined ? '' : ` ${esc(bar.note)}`}</text>`,
    );
    body.push(`<text x="${(x0 + slot * 0.35).toFixed(1)}" y="${plotBottom + 16}" text-anchor="middle">${esc(bar.label)}</text>`);
  });
  body.push(`<line x1="${PAD.left}" x2="${plotRight}" y1="${plotBottom}" y2="${plotBottom}" stroke="#888"/>`);
  return frame(spec.title, '', spec.yLabel, body);
}
