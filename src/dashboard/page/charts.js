// The dashboard's charts: a thin layer over uPlot (window.uPlot, served from node_modules by the service).
// Each chart keeps at most MAX_POINTS points (five minutes at one frame a second) in column arrays, as uPlot
// wants them, and redraws on each frame. Plain browser JavaScript: tsc does not build the page.
'use strict';

window.DashboardCharts = (function () {
  const MAX_POINTS = 300;
  const HEIGHT_PX = 200;
  const AXIS = { stroke: '#8a94a6', grid: { stroke: '#262e3a', width: 1 }, ticks: { stroke: '#262e3a', width: 1 } };
  const PALETTE = ['#5ec4b6', '#8ab4f8', '#e9c46a', '#e76f51', '#b48ead', '#a3be8c', '#f4a261', '#88c0d0'];

  function widthOf(el) {
    return Math.max(300, el.clientWidth || 600);
  }

  /**
   * A chart in `el` with one line per series ({ label, color }); `format` renders a y value in the legend.
   * Returns { push(tSeconds, values), reset() }.
   */
  function create(el, seriesDefs, format) {
    const data = [[]].concat(seriesDefs.map(() => []));
    const opts = {
      width: widthOf(el),
      height: HEIGHT_PX,
      // Drawn at once on each frame: a wall screen wants the latest, not an animation.
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      axes: [Object.assign({}, AXIS), Object.assign({ size: 55 }, AXIS)],
      series: [{}].concat(seriesDefs.map((s, i) => ({
        label: s.label,
        stroke: s.color || PALETTE[i % PALETTE.length],
        width: 2,
        value: (u, v) => (v === null || v === undefined ? '—' : format(v)),
      }))),
    };
    const plot = new window.uPlot(opts, data, el);
    window.addEventListener('resize', () => plot.setSize({ width: widthOf(el), height: HEIGHT_PX }));
    return {
      push(tSeconds, values) {
        data[0].push(tSeconds);
        values.forEach((v, i) => data[i + 1].push(v));
        if (data[0].length > MAX_POINTS) for (const column of data) column.shift();
        plot.setData(data);
      },
      get points() {
        return data[0].length;
      },
    };
  }

  return { create, PALETTE, MAX_POINTS };
})();
