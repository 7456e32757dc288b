// Time-series charts with uPlot (pinned in package-lock.json, copied into the build by
// build.mjs; nothing is fetched from elsewhere). A chart fills its container's width and
// follows it as the window changes.

import uPlot from '../vendor/uPlot.esm.js';
import { colourOf } from './dom.js';

const css = (name, fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

// A line chart of series [{label, values}] over xs (seconds since the epoch), in container.
// Returns {destroy()}. range: [min, max] of the x axis in seconds; unit: the y axis' label; yMax:
// the y axis reaches at least this (100 for percentages).
export function lineChart(container, { xs, series, range, unit, format = (v) => String(v), step = 'day', yMax = 0.001 }) {
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const fg = css('--fg', '#111');
  const grid = css('--grid', 'rgba(0,0,0,0.1)');
  // Canvas fonts take pixels: the axes follow the page's type scale (larger on a wall monitor).
  const px = parseFloat(getComputedStyle(document.documentElement).fontSize) || 15;
  const font = `${Math.round(px * 0.8)}px system-ui, sans-serif`;
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font,
    labelFont: `bold ${font}` };
  const height = () => Math.round(Math.max(240, Math.min(900, window.innerHeight * 0.38)));
  // step 'time': points minutes apart (a job's history), labelled with the time of day
  const fmtDate = step === 'month'
    ? (s) => new Date(s * 1000).toLocaleDateString(undefined, { year: 'numeric', month: 'short', timeZone: 'UTC' })
    : step === 'time'
      ? (s) => new Date(s * 1000).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' })
      : (s) => new Date(s * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const opts = {
    width: Math.max(320, container.clientWidth),
    height: height(),
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true, range: range ? () => range : undefined }, y: { range: (u, min, max) => [0, Math.max(max * 1.1, yMax)] } },
    axes: [{ ...axis, values: (u, splits) => splits.map(fmtDate), space: step === 'time' ? Math.round(px * 9) : 50 },
      { ...axis, label: unit, size: Math.round(px * 5), labelSize: Math.round(px * 1.6), values: (u, splits) => splits.map(format) }],
    legend: { live: true },
    cursor: { focus: { prox: 24 } },
    series: [{ label: step === 'time' ? 'Time (UTC)' : 'Period (UTC)', value: (u, v) => (v === null || v === undefined ? '—' : fmtDate(v)) },
      ...series.map((s) => ({
        label: s.label,
        stroke: colourOf(s.label, dark),
        fill: `${colourOf(s.label, dark).replace('hsl(', 'hsl(').replace(')', ' / 0.12)')}`,
        width: 2,
        points: { show: true, size: 7 },
        spanGaps: false,
        value: (u, v) => (v === null || v === undefined ? '—' : format(v)),
      }))],
  };
  const plot = new uPlot(opts, [xs, ...series.map((s) => s.values)], container);
  const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(320, container.clientWidth), height: height() }));
  ro.observe(container);
  return { destroy() { ro.disconnect(); plot.destroy(); } };
}
