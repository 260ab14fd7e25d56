// A sensor page's environment panel: the last 24 h from GET
// /api/v1/sensors/{id}/env, extended by the live hub's env updates; the
// latest values with sparklines and a table of the last hours.
import { api, fill, fmtHM, fmtTime, h, num } from "./lib.js";

const ENV_MS = 86400e3;
const NS = "http://www.w3.org/2000/svg";

// spark is a sparkline of key over the last 24 h.
function spark(recs, key, label) {
  const W = 160, H = 36;
  const t0 = Date.now() - ENV_MS;
  const pts = recs.filter((r) => r.t >= t0 && typeof r[key] === "number");
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "spark");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${label} nas últimas 24 h`);
  if (pts.length < 2) return svg;
  let lo = Math.min(...pts.map((r) => r[key])), hi = Math.max(...pts.map((r) => r[key]));
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", pts.map((r) => `${((r.t - t0) / ENV_MS * W).toFixed(1)},${(2 + (hi - r[key]) / (hi - lo) * (H - 4)).toFixed(1)}`).join(" "));
  svg.append(line);
  return svg;
}

// hourly: the newest reading of each of the last 6 hours, newest first.
function hourly(day) {
  const rows = [];
  const seen = new Set();
  for (let i = day.length - 1; i >= 0 && rows.length < 6; i--) {
    const hour = Math.floor(day[i].t / 3600e3);
    if (seen.has(hour)) continue;
    seen.add(hour);
    rows.push(day[i]);
  }
  return rows;
}

function envTable(rows) {
  return h("div", { class: "table-wrap" }, h("table", { class: "env-table", "data-env-table": "" },
    h("thead", {}, h("tr", {}, h("th", {}, "Hora"), h("th", {}, "Temperatura (°C)"), h("th", {}, "Umidade relativa (%)"), h("th", {}, "Pressão (hPa)"))),
    h("tbody", {}, rows.map((r) => h("tr", {}, h("td", {}, fmtHM.format(new Date(r.t))), h("td", {}, num(r.temp, 1)), h("td", {}, num(r.rh, 0)), h("td", {}, num(r.p, 1)))))));
}

// envPanel(id, el): {add(e), load(latest), render()} drawing into el;
// latest() is the hub's newest env record of the sensor.
export function envPanel(id, el) {
  let recs = []; // {t (ms), temp, rh, p, wind}, time order
  let msg = "";
  function add(e) {
    const t = Date.parse(e.t);
    const last = recs[recs.length - 1];
    if (!Number.isFinite(t) || (last && t <= last.t)) return false;
    recs.push({ t, temp: e.temp_c ?? e.temperature_c, rh: e.rh_pct ?? e.humidity_pct, p: e.pressure_hpa, wind: e.wind_ms });
    return true;
  }
  async function load(latest) {
    const to = new Date(), from = new Date(to - ENV_MS);
    try {
      const data = await api(`/api/v1/sensors/${encodeURIComponent(id)}/env?from=${from.toISOString()}&to=${to.toISOString()}`, { feature: "O histórico ambiental" });
      const live = recs;
      recs = [];
      for (const r of data.records || []) add(r);
      for (const r of live) if (!recs.length || r.t > recs[recs.length - 1].t) recs.push(r);
      msg = "";
    } catch (e) { msg = e.message; }
    const l = latest && latest(); // the hub's newest, which may have come during the load
    if (l) add(l);
    render();
  }
  function render() {
    const last = recs[recs.length - 1];
    if (!last) {
      el.replaceChildren(h("p", { class: "muted", "data-env": "none" }, msg || "Sem leituras ambientais deste sensor nas últimas 24 h."));
      return;
    }
    const t0 = Date.now() - ENV_MS;
    const day = recs.filter((r) => r.t >= t0);
    const q = (key, label, unit, d) => {
      const vals = day.map((r) => r[key]).filter((v) => typeof v === "number");
      return h("div", { class: "stat", "data-env": key }, label, h("b", {}, last[key] === undefined || last[key] === null ? "—" : `${num(last[key], d)} ${unit}`),
        spark(recs, key, label),
        vals.length ? h("small", { class: "muted" }, `24 h: ${num(Math.min(...vals), d)}–${num(Math.max(...vals), d)} ${unit}`) : null);
    };
    fill(el,
      h("div", { class: "stats" },
        q("temp", "Temperatura", "°C", 1), q("rh", "Umidade relativa", "%", 0), q("p", "Pressão", "hPa", 1),
        typeof last.wind === "number" ? q("wind", "Vento", "m/s", 1) : null,
        h("div", { class: "stat" }, "Leitura", h("b", {}, fmtTime.format(new Date(last.t))), h("small", { class: "muted" }, `${day.length} leituras em 24 h`))),
      envTable(hourly(day)),
      msg ? h("p", { class: "muted" }, msg) : null);
  }
  return { add, load, render };
}
