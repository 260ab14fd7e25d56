// Sossego dashboard: the "Relatórios" page (#/relatorios). Reports per
// sensor or municipality and legal period from GET /api/v1/reports (the
// long-term tier, docs/api.md), drawn by hand on a canvas, with downloads
// (PDF, CSV, JSON, exports by minute and by second). app.js routes here
// (view).
import { TZ, api, db, h } from "./lib.js";
import { label, municipalityName } from "./state.js";

// pt-BR label of a zone (GET /api/v1/labels, loaded by app.js).
const zoneName = (z) => label("zone", z);
// A sensor as the selector shows it: where it is, the municipality, its id.
const sensorName = (s) => `${s.address || s.id} — ${municipalityName(s.municipality, s.code)}${s.address ? ` (${s.id})` : ""}`;
// What the code's calendar says of a day.
const dayKind = (d) => d.holiday ? "feriado: " + d.holiday : d.holiday_eve ? "véspera de feriado" : d.business_day === false ? "não útil" : "útil";
const pct = (v) => (100 * (v || 0)).toLocaleString("pt-BR", { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + " %";
const fmtDT = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
const fmtDM = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", hour12: false });
const fmtDMH = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit", hour12: false });
const ymd = new Intl.DateTimeFormat("en-CA", { timeZone: TZ, year: "numeric", month: "2-digit", day: "2-digit" });
const BASIS = { laf: "dos histogramas LAF de cada segundo", laeq_1s: "do LAeq de 1 s (sem histogramas)", misto: "de histogramas LAF e de LAeq de 1 s" };

const get = (path) => api(path, { feature: "Os relatórios" });

// Local dates (YYYY-MM-DD, Brasília) for the preset periods.
function today() { return ymd.format(new Date()); }
function addDays(d, n) { const t = new Date(d + "T12:00:00Z"); t.setUTCDate(t.getUTCDate() + n); return t.toISOString().slice(0, 10); }
function monthStart(d) { return d.slice(0, 8) + "01"; }
const PRESETS = {
  hoje: { label: "Hoje", range: () => [today(), today()] },
  ontem: { label: "Ontem", range: () => [addDays(today(), -1), addDays(today(), -1)] },
  "7d": { label: "Últimos 7 dias", range: () => [addDays(today(), -6), today()] },
  mes: { label: "Este mês", range: () => [monthStart(today()), today()] },
  "mes-passado": { label: "Mês passado", range: () => { const first = monthStart(today()); const prev = addDays(first, -1); return [monthStart(prev), prev]; } },
  custom: { label: "Personalizado", range: null },
};

function stat(label, value, title) { return h("div", { class: "stat", title }, label, h("b", {}, value)); }
// sensorBlock: one sensor's report (data the whole answer, minutes its
// 1-min series on short ranges, else null).
function sensorBlock(r, data, minutes) {
  const box = h("section", { class: "panel report", "data-report-sensor": r.sensor });
  const canvas = h("canvas", { class: "report-chart", role: "img", "aria-label": `Gráfico do relatório de ${r.sensor}` });
  const basis = BASIS[r.percentile_basis] || "";
  box.append(...[
    h("h2", {}, `Sensor ${r.sensor}`),
    h("p", { class: "muted" }, [r.address, r.municipality_name || r.municipality, r.zone ? "zona: " + zoneName(r.zone) : ""].filter(Boolean).join(" · ")),
    h("div", { class: "stats" },
      stat(`LAeq, cobertura ${pct(r.coverage)}`, db(r.laeq_db) + " dB", "nível equivalente do período inteiro, por energia"),
      stat("L90 do período, dos histogramas", db(r.l90_db) + " dB", "nível excedido em 90 % do tempo, " + basis),
      stat("L10 / L50 / L95", `${db(r.l10_db)} / ${db(r.l50_db)} / ${db(r.l95_db)}`, basis),
      stat("LAFmax", db(r.lafmax_db) + " dB"),
      stat("Lden", db(r.lden_db) + " dB", `Ld ${db(r.ld_db)} · Le ${db(r.le_db)} · Ln ${db(r.ln_db)} (dia 07–19, entardecer 19–23 +5 dB, noite 23–07 +10 dB)`),
      stat("Minutos acima do limite", String(r.minutes_above), "minutos cujo LAeq de 1 min passou do limite em vigor"),
      stat("Episódios acima do limite", String(r.episodes_above), "sequências de minutos consecutivos acima do limite")),
    h("div", { class: "chart-wrap" }, canvas),
    h("div", { class: "legend" },
      h("span", {}, h("i", { class: "lg-leq" }), minutes ? "LAeq de 1 min" : "LAeq por ocorrência de período legal"),
      h("span", {}, h("i", { class: "lg-limit" }), "limite em vigor")),
    h("h3", {}, "Por período legal"),
    table(["Período", "Limite", "LAeq", "L90", "LAFmax", "Min. acima", "Episódios", "Cobertura"],
      (r.periods || []).map((p) => [p.period_label, db(p.limit_dba), db(p.laeq_db), db(p.l90_db), db(p.lafmax_db), p.minutes_above, p.episodes_above, pct(p.coverage)]), "report-periods"),
    h("h3", {}, "Por ocorrência"),
    table(["Início", "Fim", "Período", "Limite", "LAeq", "L90", "Min. acima", "Episódios", "Cobertura"],
      (r.occurrences || []).map((o) => [fmtDMH.format(new Date(o.start)), fmtDMH.format(new Date(o.end)), (o.period || "sem limite") + (o.holiday ? " (feriado)" : o.holiday_eve ? " (véspera de feriado)" : ""), db(o.limit_dba), db(o.laeq_db), db(o.l90_db), o.minutes_above, o.episodes_above, pct(o.coverage)]), "report-occurrences"),
    (r.days || []).length > 1 ? h("h3", {}, "Por dia") : null,
    (r.days || []).length > 1 ? table(["Dia", "Calendário", "LAeq 24 h", "Ld", "Le", "Ln", "Lden", "L90", "Min. acima", "Cobertura"],
      r.days.map((d) => [d.date.split("-").reverse().join("/"), dayKind(d), db(d.laeq_db), db(d.ld_db), db(d.le_db), db(d.ln_db), db(d.lden_db), db(d.l90_db), d.minutes_above, pct(d.coverage)]), "report-days") : null,
  ].filter(Boolean));
  requestAnimationFrame(() => draw(canvas, r, data, minutes));
  return box;
}
function table(heads, rows, id) {
  return h("div", { class: "table-wrap" }, h("table", { "data-table": id },
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((c) => h("td", {}, String(c))))))));
}

// The chart: LAeq of each minute (short ranges) or of each occurrence of
// a legal period (a step at its level), the limit in force as a dashed
// red step line, days on the axis.
function draw(canvas, r, data, minutes) {
  const W = Math.max(280, canvas.parentElement.clientWidth), H = W < 480 ? 200 : 260;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = W * dpr; canvas.height = H * dpr;
  canvas.style.width = W + "px"; canvas.style.height = H + "px";
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  const t0 = Date.parse(r.from || data.from), t1 = Date.parse(r.to || data.to);
  const pad = { l: 40, r: 10, t: 18, b: 26 };
  const series = minutes
    ? minutes.map((m) => ({ a: Date.parse(m.start), b: Date.parse(m.start) + 60e3, v: m.laeq_db }))
    : (r.occurrences || []).filter((o) => o.laeq_db !== null).map((o) => ({ a: Date.parse(o.start), b: Date.parse(o.end), v: o.laeq_db }));
  const limits = (r.limits || []).filter((s) => s.limit_dba !== null).map((s) => ({ a: Date.parse(s.start), b: Date.parse(s.end), v: s.limit_dba }));
  const vals = series.map((s) => s.v).concat(limits.map((s) => s.v));
  const lo = Math.floor(Math.min(40, ...vals) / 10) * 10, hi = Math.ceil(Math.max(70, ...vals) / 10) * 10;
  const x = (t) => pad.l + (t - t0) / Math.max(1, t1 - t0) * (W - pad.l - pad.r);
  const y = (v) => pad.t + (hi - v) / (hi - lo) * (H - pad.t - pad.b);
  ctx.clearRect(0, 0, W, H);
  ctx.font = "11px system-ui, sans-serif";
  ctx.strokeStyle = "#e6eaee"; ctx.fillStyle = "#5d6b78"; ctx.lineWidth = 1;
  for (let v = lo; v <= hi; v += 10) {
    ctx.beginPath(); ctx.moveTo(pad.l, y(v)); ctx.lineTo(W - pad.r, y(v)); ctx.stroke();
    ctx.fillText(String(v), 6, y(v) + 4);
  }
  const dayMs = 864e5, span = t1 - t0;
  const step = span <= 2 * dayMs ? 3 * 3600e3 : span <= 10 * dayMs ? dayMs : 7 * dayMs;
  for (let t = Math.ceil((t0 + 3 * 3600e3) / step) * step - 3 * 3600e3; t <= t1; t += step) { // Brasília is UTC−3
    ctx.beginPath(); ctx.moveTo(x(t), pad.t); ctx.lineTo(x(t), H - pad.b); ctx.stroke();
    const label = step < dayMs ? fmtDMH.format(new Date(t)) : fmtDM.format(new Date(t));
    ctx.fillText(label, Math.min(W - 70, Math.max(pad.l, x(t) - 16)), H - 8);
  }
  ctx.fillText("dB(A)", 6, 10);
  const steps = (list, color, width, dash) => {
    ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
    ctx.beginPath();
    let prevB = null;
    for (const s of list) {
      if (prevB !== null && Math.abs(s.a - prevB) < 1000) ctx.lineTo(x(s.a), y(s.v)); else ctx.moveTo(x(s.a), y(s.v));
      ctx.lineTo(x(s.b), y(s.v));
      prevB = s.b;
    }
    ctx.stroke(); ctx.restore();
  };
  steps(series, "#1f5f8b", 1.5, []);
  steps(limits, "#b3261e", 1.5, [6, 4]);
  canvas.dataset.points = String(series.length);
  canvas.dataset.limits = String(limits.length);
}

// loadTargets fills the selector with the sensors and municipalities and
// picks the sensor of the link (#/relatorios?sensor=…).
async function loadTargets(target, msg, state) {
  try {
    const data = await get("/api/v1/sensors");
    const sensors = (data.sensors || []).slice().sort((a, b) => (a.municipality || "").localeCompare(b.municipality || "") || a.id.localeCompare(b.id));
    const munis = [...new Set(sensors.map((s) => s.municipality).filter(Boolean))].sort();
    target.replaceChildren(
      h("optgroup", { label: "Sensores" }, sensors.map((s) => h("option", { value: "sensor=" + encodeURIComponent(s.id) }, sensorName(s)))),
      h("optgroup", { label: "Municípios (todos os sensores)" }, munis.map((m) => h("option", { value: "municipality=" + encodeURIComponent(m) }, municipalityName(m)))));
    const want = new URLSearchParams((location.hash.split("?")[1]) || "");
    if (want.get("sensor")) target.value = "sensor=" + encodeURIComponent(want.get("sensor"));
    state.target = target.value;
  } catch (e) { msg.textContent = "Não foi possível carregar os sensores: " + e.message; }
}

function link(text, href, id) { return h("a", { class: "button secondary", href, id, download: "" }, text); }
// renderDownloads: the report shown as PDF, CSV and JSON, and a sensor's
// series by minute (and by second up to 31 days).
function renderDownloads(downloads, state) {
  if (!state.data) { downloads.replaceChildren(); return; }
  const base = "/api/v1/reports?" + state.shown;
  const isSensor = state.shown.startsWith("sensor=");
  const sid = isSensor ? new URLSearchParams(state.shown).get("sensor") : "";
  const days = (Date.parse(state.data.to) - Date.parse(state.data.from)) / 864e5;
  const sp = new URLSearchParams(state.shown);
  const exp = (res) => `/api/v1/sensors/${encodeURIComponent(sid)}/export?from=${sp.get("from")}&to=${sp.get("to")}&res=${res}&format=csv`;
  downloads.replaceChildren(h("span", { class: "muted" }, "Baixar: "),
    link("PDF", base + "&format=pdf", "dl-pdf"), link("CSV", base + "&format=csv", "dl-csv"), link("JSON", base + "&format=json", "dl-json"),
    isSensor ? link("Dados de 1 min (CSV)", exp("1min"), "dl-1min") : null,
    isSensor && days <= 31 ? link("Dados de 1 s (CSV)", exp("1s"), "dl-1s") : null);
}

function view(root) {
  const state = { preset: "hoje", target: "", from: today(), to: today(), data: null, minutes: null, seq: 0, shown: "" };
  const target = h("select", { id: "report-target", "aria-label": "Sensor ou município" });
  const preset = h("select", { id: "report-preset", "aria-label": "Período" }, Object.entries(PRESETS).map(([k, p]) => h("option", { value: k }, p.label)));
  const from = h("input", { type: "date", id: "report-from", "aria-label": "De" });
  const to = h("input", { type: "date", id: "report-to", "aria-label": "Até" });
  const go = h("button", { type: "submit", id: "report-go" }, "Gerar relatório");
  const msg = h("p", { class: "muted", id: "report-msg", role: "status" });
  const out = h("div", { id: "report-out" });
  const downloads = h("div", { class: "downloads", id: "report-downloads" });
  const form = h("form", { class: "toolbar report-form", onsubmit: (ev) => { ev.preventDefault(); run(); } },
    h("label", {}, "Sensor ou município ", target), h("label", {}, "Período ", preset),
    h("label", {}, "De ", from), h("label", {}, "até ", to), go);
  root.replaceChildren(h("h1", {}, "Relatórios"),
    h("p", { class: "muted" }, "Níveis por período legal do código municipal, Ld/Le/Ln/Lden, percentis e minutos acima do limite, a partir dos agregados de longo prazo."),
    h("div", { class: "panel" }, form, msg), downloads, out);

  function syncDates() {
    const p = PRESETS[state.preset];
    const custom = !p.range;
    from.disabled = to.disabled = !custom;
    if (!custom) { [state.from, state.to] = p.range(); }
    from.value = state.from; to.value = state.to;
  }
  preset.addEventListener("change", () => { state.preset = preset.value; syncDates(); });
  from.addEventListener("change", () => { state.from = from.value; });
  to.addEventListener("change", () => { state.to = to.value; });
  target.addEventListener("change", () => { state.target = target.value; });


  function query(extra) {
    return `${state.target}&from=${state.from}&to=${state.to}${extra || ""}`;
  }

  async function run() {
    if (!state.target) { msg.textContent = "Escolha um sensor ou município."; return; }
    if (!state.from || !state.to) { msg.textContent = "Informe as datas de início e fim."; return; }
    // Only the latest request's answer is shown (an earlier one may end later).
    const seq = ++state.seq;
    const q = query(), sensorTarget = state.target.startsWith("sensor=") ? state.target.slice(7) : "";
    const range = { from: state.from, to: state.to };
    msg.textContent = "calculando…";
    try {
      const data = await get("/api/v1/reports?" + q + "&format=json");
      let minutes = null;
      const span = Date.parse(data.to) - Date.parse(data.from);
      if (sensorTarget && span <= 3 * 864e5) {
        try {
          const ex = await get(`/api/v1/sensors/${sensorTarget}/export?from=${range.from}&to=${range.to}&res=1min&format=json`);
          minutes = ex.records || [];
        } catch (e) { minutes = null; }
      }
      if (seq !== state.seq) return;
      state.data = data; state.minutes = minutes; state.shown = q;
      msg.textContent = `Período: ${fmtDT.format(new Date(data.from))} a ${fmtDT.format(new Date(data.to))} (horário de Brasília).`;
      render();
    } catch (e) {
      if (seq !== state.seq) return;
      state.data = null; msg.textContent = e.message; out.replaceChildren();
    }
    renderDownloads(downloads, state);
  }

  function render() {
    const sensors = state.data.sensors || [];
    out.replaceChildren(...sensors.map((r) => sensorBlock(r, state.data, state.minutes)));
  }

  loadTargets(target, msg, state).then(() => { syncDates(); if (state.target) run(); });
  syncDates();
  return { live() {} };
}

export { view };
