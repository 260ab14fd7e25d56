// A sensor's page (#/sensor/{id}): the live value and its age, the chart
// of a window (15 min, 1 h, 24 h) with the limit in force from the server,
// the window's figures and the environment of the last 24 h.
import { $, api, db, fill, fmtDateTime, fmtTime, h } from "./lib.js";
import { S, gatewayOf, label, municipalityName, sensor } from "./state.js";
import { GRADES, ageClass, clockText, freshness, limitText, marginClass, marginText, periodText } from "./levels.js";
import { levelChart } from "./chart.js";
import { envPanel } from "./env.js";

const RANGES = {
  "15min": { ms: 15 * 60e3, step: "1s", label: "15 min", series: "LAeq (1 s)" },
  "1h": { ms: 3600e3, step: "10s", label: "1 h", series: "LAeq (10 s)" },
  "24h": { ms: 86400e3, step: "2m", label: "24 h", series: "LAeq (2 min)" },
};

function head(s) {
  const l = s.level, g = gatewayOf(s), f = freshness(s);
  const cls = f.state === "live" ? marginClass(l) : "none";
  return [
    h("h1", {}, `Sensor ${s.id}`),
    h("div", { class: "level " + ageClass(f), "data-age": f.state }, h("span", { class: "value", id: "detail-laeq" }, l ? db(l.laeq_db) : "—"), h("span", {}, "dB(A)"),
      h("span", { class: "margin " + cls }, marginText(l)), h("span", { class: "age " + ageClass(f), id: "detail-age" }, f.text)),
    s.lateLevel && s.lateLevel !== l ? h("p", { class: "age age-late", id: "detail-late" }, `chegando leituras atrasadas: registro de ${fmtDateTime.format(new Date(s.lateLevel.t))} (${db(s.lateLevel.laeq_db)} dB(A))`) : null,
    h("div", { class: "facts" },
      h("span", {}, municipalityName(s.municipality, s.code)), h("span", {}, s.address || ""), h("span", {}, s.zone ? label("zone", s.zone) : ""),
      limitText(l) ? h("span", {}, `${limitText(l)}, ${periodText(l)}`) : null, // without one, the margin's badge says so
      h("span", {}, h("span", { class: "dot " + (g ? g.state : "") }), g ? `gateway ${g.gateway} ${g.state || "sem status"}` : ""),
      h("span", {}, clockText(s)),
      s.grade ? h("span", { class: "grade " + s.grade }, GRADES[s.grade] || s.grade) : null,
      s.meter && s.meter.calibrated_at ? h("span", {}, "calibrado em " + s.meter.calibrated_at.split("-").reverse().join("/")) : null),
    watched(s),
  ];
}

// watched: the establishments the register says the sensor watches — name,
// CNPJ/CPF, address, kind and sound source — or that it names none.
function watched(s) {
  const es = s.establishments || [];
  if (!es.length) return h("p", { class: "muted watched", id: "detail-establishments" }, "Nenhum estabelecimento vinculado a este sensor no cadastro.");
  const kind = (e) => [e.type ? label("establishment", e.type) : "", e.mechanism ? label("mechanism", e.mechanism) : ""].filter(Boolean).join(", ");
  return h("div", { class: "watched", id: "detail-establishments" },
    h("span", { class: "muted" }, es.length > 1 ? "Estabelecimentos monitorados" : "Estabelecimento monitorado"),
    h("ul", {}, es.map((e) => h("li", {}, h("b", {}, e.name), e.document ? ` — CNPJ/CPF ${e.document}` : "",
      e.address ? ` — ${e.address}` : "", kind(e) ? ` (${kind(e)})` : ""))));
}

const stat = (label, v, key) => h("div", { class: "stat", "data-stat": key }, label, h("b", {}, v));

// windowStats: the window's figures from the server — LAeq by energy, L90
// from the merged histograms, the coverage; without them only the chart's
// points are known: their energy mean, labelled as such, and no percentile.
function windowStats(r, w, windowTo, win) {
  if (w && w.laeq_db !== null && w.laeq_db !== undefined) {
    const until = windowTo ? ` (até ${fmtTime.format(windowTo)})` : "";
    const cov = (100 * (w.coverage || 0)).toLocaleString("pt-BR", { maximumFractionDigits: 0 });
    const basis = w.percentile_basis === "laeq_1s" ? "do LAeq de 1 s" : w.percentile_basis === "misto" ? "dos histogramas e do LAeq de 1 s" : "dos histogramas";
    return [stat(`LAeq ${r.label}, cobertura ${cov} %${until}`, db(w.laeq_db) + " dB", "laeq"),
      stat("LAFmax da janela", db(w.lafmax_db) + " dB", "lafmax"),
      stat(`L90 da janela, ${basis}`, db(w.l90_db) + " dB", "l90"),
      stat("Leituras no gráfico", String(win.length), "count")];
  }
  const leq = win.length ? 10 * Math.log10(win.reduce((a, p) => a + 10 ** (p.laeq / 10), 0) / win.length) : null;
  const max = win.length ? Math.max(...win.map((p) => p.lafmax ?? -Infinity)) : null;
  return [stat(`LAeq ${r.label} (média dos pontos do gráfico)`, db(leq) + " dB", "laeq"),
    stat("LAFmax dos pontos", (max === null || max === -Infinity) ? "—" : db(max) + " dB", "lafmax"),
    stat("Leituras no gráfico", String(win.length), "count")];
}

// readWindow reads the window's readings and the limit in force over it,
// as the server's codes engine states it (holidays and service days
// included).
async function readWindow(id, r) {
  const to = new Date(), from = new Date(to - r.ms);
  const data = await api(`/api/v1/readings?sensor=${encodeURIComponent(id)}&from=${from.toISOString()}&to=${to.toISOString()}&step=${r.step}`, { feature: "O histórico de leituras" });
  const rows = data.records || data.buckets || [];
  return {
    to, empty: rows.length === 0,
    points: rows.map((x) => ({ t: Date.parse(x.t || x.start), laeq: x.laeq_db, lafmax: x.lafmax_db, l90: x.l90_db })),
    limits: (data.limits || []).map((x) => ({ a: Date.parse(x.start), b: Date.parse(x.end), v: typeof x.limit_dba === "number" ? x.limit_dba : null, night: x.period === "noturno" })),
    figures: data.window || null,
  };
}

// liveSteps: the server's steps, extended past the load by the limit the
// live values carry (the hub sends the server's exact limit in force).
function liveSteps(steps, l) {
  const out = steps.slice();
  const last = out[out.length - 1];
  const end = last ? last.b : 0;
  if (l && l.t && Date.parse(l.t) > end) out.push({ a: end || Date.parse(l.t), b: Date.now() + 1000, v: typeof l.limit_db === "number" ? l.limit_db : null, night: l.period === "noturno" });
  return out;
}

export function sensorView(id) {
  const root = $("#view");
  const s = sensor(id);
  let range = "15min";
  // the window as read: points {t (ms), laeq, lafmax, l90}, limit steps
  // {a, b (ms), v (dB or null), night}, the server's figures, and when
  let win = { points: [], limits: [], figures: null, to: null };
  let loadedAt = Date.now();
  const seg = h("div", { class: "seg", role: "group", "aria-label": "Janela do gráfico" },
    Object.entries(RANGES).map(([k, r]) => h("button", { type: "button", "data-range": k, class: k === range ? "on" : "", onclick: () => { range = k; seg.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b.dataset.range === k)); load(); } }, r.label)));
  const headBox = h("div");
  const chartBox = h("div", { id: "chart", class: "chart", role: "img" });
  let lc = null; // levelChart, made once chartBox is in the page (it needs the width)
  const stats = h("div", { class: "stats" });
  const envBox = h("div", { class: "env", id: "env" });
  const env = envPanel(id, envBox);
  const msg = h("p", { class: "muted" });
  fill(root,
    h("p", {}, h("a", { href: "#/" }, "← todos os sensores")),
    headBox,
    h("div", { class: "panel" }, h("div", { class: "toolbar" }, seg, msg), chartBox,
      h("div", { class: "legend" }, h("span", {}, h("i", { class: "lg-night" }), "período noturno (faixa sombreada)"))),
    h("h2", {}, "Janela"), stats,
    h("h2", {}, "Ambiente (últimas 24 h)"), envBox);

  const renderHead = () => { fill(headBox, head(s)); env.render(); };
  async function load() {
    msg.textContent = "carregando…";
    let text = "";
    try {
      const w = await readWindow(id, RANGES[range]);
      win = w;
      text = w.empty ? "Nenhuma leitura nesta janela." : "";
    } catch (e) { win = { points: [], limits: [], figures: null, to: win.to }; text = e.message; }
    loadedAt = Date.now();
    msg.textContent = text;
    draw();
  }
  function draw() {
    const r = RANGES[range];
    const now = Date.now();
    if (!lc) lc = levelChart(chartBox);
    lc.update(win.points, now - r.ms, now, liveSteps(win.limits, s.level), r.series);
    stats.replaceChildren(...windowStats(r, win.figures, win.to, win.points.filter((p) => p.t >= now - r.ms && p.laeq !== undefined)));
  }
  renderHead();
  load();
  env.load(() => s.env);
  // Every second the data age; every 5 s the chart slides; every minute
  // the window (and its figures) is read again.
  let ticks = 0;
  const timer = setInterval(() => {
    if (S.view !== view) { clearInterval(timer); if (lc) lc.destroy(); return; }
    renderHead();
    if (++ticks % 5 === 0) draw();
    if (Date.now() - loadedAt > 60000) load();
  }, 1000);
  const view = {
    live(changed) {
      if (!changed.includes(id)) return;
      if (s.env) env.add(s.env);
      renderHead();
      const l = s.level;
      if (l && l.t) {
        const t = Date.parse(l.t);
        const last = win.points[win.points.length - 1];
        if (!last || t > last.t) { win.points.push({ t, laeq: l.laeq_db, lafmax: l.lafmax_db }); draw(); }
      }
    },
  };
  return view;
}
