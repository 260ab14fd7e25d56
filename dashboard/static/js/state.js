// What the dashboard knows: the signed-in user, the register of sensors and
// gateways with their latest values, the alerts and their triage, and the
// pt-BR labels of the codes' vocabularies. Filled by app.js (API and live
// hub) and read by every view.
import { api, banner } from "./lib.js";

export const S = {
  me: null,
  sensors: new Map(), // id → {id, municipality, gateway, code, zone, address, grade, level, env, limit}
  gateways: new Map(), // id → status
  alerts: new Map(), // id → alert
  notices: new Map(), // alert id → document view shown (docs/workflow-api.md)
  triage: new Map(), // alert id → {acked, acked_by, acked_at, assignee, …}
  assignees: null, // user names of the fiscais an alert may be assigned to
  codes: null,
  labels: null, // pt-BR labels of the codes vocabularies (GET /api/v1/labels)
  codeViews: new Map(),
  filter: localStorage.getItem("sossego.filter") || "",
  view: null, // {live(changed, m), alert(a, kind), caseUpdate(c)}: the view shown
  unseen: 0,
};

// sensor returns the sensor's entry, made on first sight.
export function sensor(id) {
  let s = S.sensors.get(id);
  if (!s) { s = { id, level: null, env: null }; S.sensors.set(id, s); }
  return s;
}

// municipalityName: "Lapa/PR" for a municipality id (a gateway's topic
// segment) or a code id, from the codes loaded at sign-in; the id itself
// when no code names it.
export function municipalityName(id, codeId) {
  const cs = S.codes || [];
  const c = (codeId && cs.find((x) => x.id === codeId)) || cs.find((x) => x.id === id);
  return c ? `${c.municipality}/${c.state}` : id || "";
}

// codeTitle: "Lei nº 1783/2004 (Lapa/PR)" for a code id.
export function codeTitle(id) {
  const c = (S.codes || []).find((x) => x.id === id);
  return c ? c.title : "código " + id;
}

export function gatewayOf(s) { return s.gateway ? S.gateways.get(s.gateway) : null; }

// pt-BR label of a vocabulary value (zone, source, day, …) from GET
// /api/v1/labels (codes.Labels), so an enum value never reaches the user;
// without them, underscores become spaces.
export const label = (kind, v) => (S.labels && S.labels[kind] && S.labels[kind][v]) || String(v === undefined || v === null ? "" : v).replaceAll("_", " ");
export const labels = (kind, vs) => vs.map((v) => label(kind, v)).join(", ");

export async function loadLabels() {
  try { S.labels = await api("/api/v1/labels", { feature: "Os rótulos do vocabulário" }); } catch (e) { S.labels = null; }
}

export async function loadSensors() {
  try {
    const data = await api("/api/v1/sensors");
    for (const v of data.sensors || []) {
      const s = sensor(v.id);
      Object.assign(s, { municipality: v.municipality, gateway: v.gateway, code: v.code || v.municipality, zone: v.zone, address: v.address, grade: v.meter && v.meter.grade, meter: v.meter, establishments: v.establishments });
      if (v.latest && !s.level) {
        s.level = { sensor: v.id, t: v.latest.t, laeq_db: v.latest.laeq_db, lafmax_db: v.latest.lafmax_db, grade: v.latest.grade, clock_synced: v.latest.clock_synced };
        if (v.limit) { s.level.limit_db = v.limit.limit_dba; s.level.period = v.limit.period; s.level.period_end = v.limit.until; s.level.margin_db = v.latest.laeq_db - v.limit.limit_dba; }
      }
    }
  } catch (e) { banner("Não foi possível carregar o cadastro de sensores: " + e.message + " Os valores ao vivo aparecem assim que chegarem."); }
}

export async function loadGateways() {
  try {
    const data = await api("/api/v1/gateways");
    for (const g of data.gateways || []) S.gateways.set(g.gateway, { gateway: g.gateway, municipality: g.municipality, state: g.state, name: g.name, clock_synced: g.clock ? g.clock.synced : undefined, clock_offset_ms: g.clock ? g.clock.offset_ms : undefined, clock_source: g.clock && g.clock.source, last_seen: g.last_seen });
  } catch (e) { /* the live feed fills gateways in */ }
}

export function openAlerts() { return [...S.alerts.values()].filter((a) => a.state === "pending" || a.state === "firing" || (a.kind === "no_data" && a.state !== "resolved" && a.state !== "cancelled")); }

export function updateAlertCount() {
  const n = openAlerts().length;
  const b = document.querySelector("#alert-count");
  b.hidden = n === 0; b.textContent = String(n);
}

export async function loadAlerts() {
  try {
    const data = await api("/api/v1/alerts?limit=200");
    for (const a of data.alerts || []) S.alerts.set(a.id, a);
  } catch (e) { S.alertsError = e.message; }
  try {
    const data = await api("/api/v1/alert-cases", { feature: "A triagem de alertas" });
    for (const t of data.cases || []) S.triage.set(t.alert_id, t);
    S.assignees = data.assignees || null;
  } catch (e) { /* older server: no triage; the buttons say so when used */ }
  updateAlertCount();
}
