// The sensor page's level chart, drawn by uPlot (vendored, see
// scripts/vendor-uplot.sh; loaded as a classic script before the modules):
// LAeq, LAFmax and L90 where present, the limit in force as a stepped line
// and night shading, both from the server's limit series (GET
// /api/v1/readings → limits). One instance per view, fed with setData;
// rebuilt only when the set of series changes; follows the container's
// width.
import { TZ, db, fmtHM, fmtTime } from "./lib.js";

const uPlot = window.uPlot;
const CHART = { laeq: "#1f5f8b", lafmax: "#9bb7cc", l90: "#6a9f58", limit: "#b3261e", night: "#e9eef6", axis: "#5d6b78", grid: "#e6eaee" };
const val = (u, v) => v === null || v === undefined ? "—" : db(v);

function chartSize(box) {
  const width = Math.max(200, box.clientWidth);
  return { width, height: width < 480 ? 220 : 300 };
}

// chartOptions: the uPlot options; st holds what the hooks and scales read
// (window, y range, night bands, newest reading).
function chartOptions(box, st, label, hasMax, hasL90) {
  const series = [
    { label: "Horário", value: (u, v) => v === null || v === undefined ? "—" : fmtTime.format(new Date(v)) },
    { label, stroke: CHART.laeq, width: 1.5, value: val },
  ];
  if (hasMax) series.push({ label: "LAFmax", stroke: CHART.lafmax, width: 1, value: val });
  if (hasL90) series.push({ label: "L90", stroke: CHART.l90, width: 1, dash: [2, 2], value: val });
  series.push({ label: "limite em vigor", stroke: CHART.limit, width: 1.5, dash: [6, 4], value: val, paths: uPlot.paths.stepped({ align: 1 }) });
  const axis = { stroke: CHART.axis, grid: { stroke: CHART.grid, width: 1 }, ticks: { stroke: CHART.grid, width: 1 }, font: "11px system-ui, sans-serif", labelFont: "12px system-ui, sans-serif" };
  return {
    ...chartSize(box), ms: 1,
    tzDate: (ts) => uPlot.tzDate(new Date(ts), TZ),
    scales: { x: { time: true, range: () => [st.t0, st.t1] }, y: { range: () => [st.lo, st.hi] } },
    axes: [
      { ...axis, label: "Horário", labelSize: 20, space: 60, values: (u, splits) => splits.map((t) => fmtHM.format(new Date(t))) },
      { ...axis, label: "dB(A)", labelSize: 18, size: 34, values: (u, splits) => splits.map((v) => String(v)) },
    ],
    series,
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    hooks: {
      // with the cursor off the plot, the legend shows the newest reading
      // (uPlot would show "—")
      setCursor: [(u) => { if (u.cursor.idx == null && st.newest >= 0) u.setLegend({ idx: st.newest }); }],
      // night bands under the grid and the lines
      drawClear: [(u) => {
        const { ctx, bbox } = u;
        ctx.save();
        ctx.fillStyle = CHART.night;
        for (const [a, b] of st.nights) {
          const x0 = u.valToPos(a, "x", true), x1 = u.valToPos(b, "x", true);
          ctx.fillRect(x0, bbox.top, Math.max(1, x1 - x0), bbox.height);
        }
        ctx.restore();
      }],
    },
  };
}

// chartData: uPlot's columns from the readings and the limit's steps —
// a null row breaks the lines at gaps; the limit holds its value to the end.
function chartData(pts, steps, from, to) {
  const rows = new Map();
  const row = (t) => { let r = rows.get(t); if (!r) { r = { t }; rows.set(t, r); } return r; };
  const num = (v) => typeof v === "number" ? v : undefined;
  const gap = Math.max(5000, (to - from) / 100);
  let prev = null;
  for (const p of pts) {
    if (prev !== null && p.t - prev > gap) Object.assign(row(prev + 1), { laeq: null, lafmax: null, l90: null });
    Object.assign(row(p.t), { laeq: num(p.laeq), lafmax: num(p.lafmax), l90: num(p.l90) });
    prev = p.t;
  }
  for (const [t] of steps) row(t);
  row(to);
  const list = [...rows.values()].sort((a, b) => a.t - b.t);
  // every row carries the limit in force at its instant, so the legend
  // shows it at any reading, not only where a step begins
  let j = -1;
  for (const r of list) {
    while (j + 1 < steps.length && steps[j + 1][0] <= r.t) j++;
    r.limit = j >= 0 ? steps[j][1] : undefined;
  }
  const hasMax = pts.some((p) => typeof p.lafmax === "number"), hasL90 = pts.some((p) => typeof p.l90 === "number");
  const data = [list.map((r) => r.t), list.map((r) => r.laeq)];
  if (hasMax) data.push(list.map((r) => r.lafmax));
  if (hasL90) data.push(list.map((r) => r.l90));
  data.push(list.map((r) => r.limit));
  return { data, hasMax, hasL90 };
}

// describe writes what is drawn on the box, for people and tests.
function describe(box, pts, nights, last) {
  box.dataset.laeq = String(pts.filter((p) => typeof p.laeq === "number").length);
  box.dataset.lastT = String(pts.length ? pts[pts.length - 1].t : 0);
  box.dataset.limit = typeof last === "number" ? String(last) : "";
  box.dataset.nights = String(nights.length);
  box.setAttribute("aria-label", `Gráfico de níveis sonoros: ${box.dataset.laeq} leituras${box.dataset.limit ? `, limite em vigor ${db(last)} dB(A)` : ""}`);
}

export function levelChart(box) {
  let u = null, key = "";
  const st = { t0: 0, t1: 1, lo: 30, hi: 80, nights: [], newest: -1 };
  const ro = new ResizeObserver(() => { if (u) u.setSize(chartSize(box)); });
  ro.observe(box);
  // points: {t, laeq, lafmax, l90} in time order; [from, to] the window;
  // limits: the limit in force as steps {a, b, v, night} (the server's).
  function update(points, from, to, limits, label) {
    st.t0 = from; st.t1 = to;
    const pts = points.filter((p) => p.t >= from && p.t <= to);
    const inWin = limits.filter((x) => x.b > from && x.a < to).map((x) => ({ ...x, a: Math.max(x.a, from), b: Math.min(x.b, to) }));
    const steps = inWin.length ? inWin.map((x) => [x.a, x.v]) : [[from, null]];
    st.nights = inWin.filter((x) => x.night).map((x) => [x.a, x.b]);
    const { data, hasMax, hasL90 } = chartData(pts, steps, from, to);
    const vals = [...pts.flatMap((p) => [p.laeq, p.lafmax]), ...steps.map((s) => s[1])].filter((v) => typeof v === "number");
    st.lo = Math.floor(Math.min(30, ...vals) / 10) * 10; st.hi = Math.ceil(Math.max(80, ...vals) / 10) * 10;
    const k = [label, hasMax, hasL90].join("|");
    if (!u || k !== key) {
      if (u) u.destroy();
      key = k;
      u = new uPlot(chartOptions(box, st, label, hasMax, hasL90), data, box);
    } else u.setData(data);
    // with the cursor off the plot, the legend shows the newest reading
    st.newest = data[1].length - 1;
    while (st.newest >= 0 && typeof data[1][st.newest] !== "number") st.newest--;
    if (st.newest >= 0 && !(u.cursor.left >= 0)) u.setLegend({ idx: st.newest });
    describe(box, pts, st.nights, steps[steps.length - 1][1]);
  }
  function destroy() { ro.disconnect(); if (u) u.destroy(); u = null; }
  return { update, destroy };
}
