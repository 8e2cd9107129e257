// The live IDs/s chart: uPlot (its own dist file, loaded before this module) over the
// last five minutes of /v1/status frames.

const WINDOW_S = 300;

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** A rate chart in `figure`; returns { push(unixMs, idsPerSecond) }. */
export function rateChart(figure) {
  const xs = [];
  const ys = [];
  let plot = null;
  let color = '';
  let axis = '';
  let grid = '';
  const width = () => Math.max(260, figure.clientWidth || 600);

  const make = () => {
    if (typeof globalThis.uPlot !== 'function') return null;
    // The canvas does not follow CSS: read the theme's colours each time the chart is made.
    const css = getComputedStyle(document.documentElement);
    color = css.getPropertyValue('--accent').trim() || '#1f5fd1';
    axis = css.getPropertyValue('--muted').trim() || '#59636e';
    grid = css.getPropertyValue('--line').trim() || '#d5dae0';
    figure.dataset.stroke = color;
    const axisOpts = { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    return new globalThis.uPlot(
      {
        width: width(),
        height: 200,
        legend: { show: false },
        cursor: { show: true, drag: { x: false, y: false } },
        // UTC like the rest of the page; at least the last minute, so a fresh page does not
        // zoom into a few seconds of sub-second ticks.
        tzDate: (ts) => globalThis.uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
        scales: {
          x: { time: true, range: (_u, min, max) => [Math.min(min, max - 60), max] },
          y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.15)] },
        },
        axes: [axisOpts, { ...axisOpts, size: 56, values: (_u, splits) => splits.map((v) => compact.format(v)) }],
        series: [{}, { label: 'IDs/s', stroke: color, width: 2, fill: color + '22', points: { show: false } }],
      },
      [xs, ys],
      figure,
    );
  };

  new ResizeObserver(() => plot?.setSize({ width: width(), height: 200 })).observe(figure);
  // Light ↔ dark while the page is open: redraw in the new colours.
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (!plot) return;
    plot.destroy();
    plot = make();
    plot?.setData([xs, ys]);
  });

  return {
    push(unixMs, rate) {
      const x = unixMs / 1000;
      if (xs.length && x <= xs[xs.length - 1]) return;
      xs.push(x);
      ys.push(rate);
      while (xs.length && xs[0] < x - WINDOW_S) {
        xs.shift();
        ys.shift();
      }
      figure.dataset.points = String(xs.length);
      figure.dataset.latest = String(rate);
      plot ??= make();
      plot?.setData([xs, ys]);
    },
  };
}
