// Sossego dashboard: a dependency-free single-page UI (pt-BR), as ES
// modules with no bundler. Data: the JSON API under /api/v1 (docs/api.md)
// and the live hub at /ws (dashboard/hub.go). Every time is shown in
// America/Sao_Paulo. This module signs in, keeps the live feed and routes
// to the views; lib.js has the shared helpers, state.js what is known.
import { $, ROLES, api, banner, db, session, toast } from "./lib.js";
import { S, loadAlerts, loadGateways, loadLabels, loadSensors, sensor, updateAlertCount } from "./state.js";
import { acceptLevel, setConnected } from "./levels.js";
import * as alarm from "./alarm.js";
import { overviewView } from "./live.js";
import { sensorView } from "./sensor.js";
import { alertsView } from "./alerts.js";
import { codesView, loadCodes } from "./codes.js";
import * as notify from "./notify.js";
import * as reports from "./reports.js";
import * as cases from "./cases.js";
import * as calibration from "./calibration.js";
import * as admin from "./admin.js";

const CASE_ACTIONS = { ack: "reconhecido", assign: "atribuído", draft: "documento salvo", issue: "documento emitido", ciente: "ciente registrado",
  recusa: "recusa registrada", regularize: "regularização registrada", auto: "auto de infração lavrado", cancel: "minuta descartada", decide: "julgamento registrado",
  edit: "minuta editada", constatacao: "constatação registrada", correct: "ato corrigido por um novo ato" };

const live = { ws: null, retry: 0, stop: false };

// ---- login -----------------------------------------------------------------
function showLogin(msg) {
  S.me = null;
  session.csrf = "";
  live.stop = true;
  if (live.ws) live.ws.close();
  $("#login").hidden = false;
  $("#nav").hidden = true; $("#who").hidden = true;
  $("#view").replaceChildren();
  banner("");
  const err = $("#login-error");
  err.hidden = !msg; err.textContent = msg || "";
}
function sessionLost(msg) { if (S.me) showLogin(msg); }
session.lost = sessionLost;

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const btn = $("#login-submit");
  btn.disabled = true;
  alarm.unlock(); // inside the user's gesture, so alerts can beep
  try {
    const me = await api("/api/v1/login", { method: "POST", body: { user: $("#login-user").value.trim(), password: $("#login-password").value } });
    $("#login-password").value = "";
    await start(me);
  } catch (e) {
    const err = $("#login-error");
    err.hidden = false;
    err.textContent = e.status === 401 ? "Usuário ou senha incorretos." : e.message;
  } finally { btn.disabled = false; }
});
$("#logout").addEventListener("click", async () => {
  try { await api("/api/v1/logout", { method: "POST" }); } catch (e) { /* session already gone */ }
  showLogin("Você saiu do painel.");
});

async function boot() {
  try { await start(await api("/api/v1/me")); } catch (e) { showLogin(e.status === 401 ? "" : e.message); }
}

async function start(me) {
  S.me = me;
  session.csrf = me.csrf_token;
  $("#login").hidden = true;
  $("#nav").hidden = false; $("#who").hidden = false;
  $("#user-name").textContent = me.user;
  $("#user-role").textContent = ROLES[me.role] || me.role;
  await Promise.all([loadSensors(), loadGateways(), loadAlerts(), loadLabels(), loadCodes().catch(() => null)]);
  connect();
  route();
}

// ---- live hub --------------------------------------------------------------
function setLive(on, text) {
  $("#live").className = "live " + (on ? "on" : "off");
  $("#live-text").textContent = text;
}
function connect() {
  live.stop = false;
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  live.ws = ws;
  setLive(false, "conectando…");
  ws.onopen = () => { live.retry = 0; setLive(true, "ao vivo"); setConnected(true); };
  ws.onmessage = (ev) => { let m; try { m = JSON.parse(ev.data); } catch (e) { return; } onMessage(m); };
  ws.onclose = (ev) => {
    if (live.ws !== ws) return;
    live.ws = null;
    setConnected(false);
    if (ev.code === 4001) { sessionLost("Sua sessão terminou. Entre novamente."); return; }
    if (live.stop) return;
    setLive(false, ev.code === 4000 ? "reconectando (conexão lenta)…" : "reconectando…");
    const wait = Math.min(30000, 500 * 2 ** live.retry++);
    setTimeout(async () => {
      if (live.stop) return;
      try { await api("/api/v1/me"); connect(); } catch (e) { if (e.status !== 401) { live.retry++; setTimeout(connect, wait); } }
    }, wait);
  };
}
function onLevels(m) {
  const changed = [];
  for (const l of m.levels || []) {
    const s = sensor(l.sensor);
    acceptLevel(s, l);
    if (l.municipality && !s.municipality) s.municipality = l.municipality;
    if (l.gateway && !s.gateway) s.gateway = l.gateway;
    if (l.grade && !s.grade) s.grade = l.grade;
    changed.push(s.id);
  }
  for (const e of m.env || []) { sensor(e.sensor).env = e; changed.push(e.sensor); }
  for (const g of m.gateways || []) S.gateways.set(g.gateway, Object.assign(S.gateways.get(g.gateway) || {}, g));
  if (S.view && S.view.live) S.view.live(changed, m);
}
function onMessage(m) {
  switch (m.type) {
    case "hello": S.tickMs = m.tick_ms; if (m.server_time) S.clockOffset = Date.parse(m.server_time) - Date.now(); break;
    case "snapshot":
    case "update": onLevels(m); break;
    case "alert": onAlert(m.event); break;
    case "case": onCase(m.case); break;
    case "ingest": toast("Ingestão: " + m.event.message, "alarm"); break;
  }
}
function onAlert(ev) {
  const a = ev.alert;
  const prev = S.alerts.get(a.id);
  S.alerts.set(a.id, Object.assign(prev || {}, a));
  if (ev.kind === "firing" || ev.kind === "no_data") {
    // Who is heard first (the establishment the register names), then where.
    const who = a.establishment ? `${a.establishment} (sensor ${a.sensor})` : `sensor ${a.sensor}`;
    const title = ev.kind === "firing" ? `Alerta: ${who} acima do limite` : `Sem dados: ${who}`;
    const body = ev.kind === "firing" ? `${db(a.laeq_db)} dB(A) para limite de ${db(a.limit_db)} dB(A) — ${a.article || ""}` : "Verifique o gateway.";
    S.unseen++;
    S.fresh = S.fresh || new Set();
    S.fresh.add(a.id);
    toast(title + " — " + body, "alarm");
    alarm.sound();
    alarm.notification(title, body);
  }
  updateAlertCount();
  if (S.view && S.view.alert) S.view.alert(a, ev.kind);
}
function onCase(c) {
  if (c.alert_id && (c.action === "ack" || c.action === "assign")) {
    const t = Object.assign({ alert_id: c.alert_id }, S.triage.get(c.alert_id));
    if (c.action === "ack" && !t.acked) Object.assign(t, { acked: true, acked_by: c.by, acked_name: c.by, acked_at: c.at });
    if (c.action === "assign") Object.assign(t, { assignee: c.assignee, assigned_by: c.by, assigned_at: c.at });
    S.triage.set(c.alert_id, t);
  }
  if (S.view && S.view.caseUpdate) S.view.caseUpdate(c);
  cases.onCase(c); // the alert cards' case lines
  if (c.by === S.me.user) return; // the acting page already says it
  const what = CASE_ACTIONS[c.action] || c.action;
  const doc = c.notice_id ? ` (${c.title ? c.title + " " : ""}${c.notice_id})` : "";
  toast(`Alerta ${c.alert_id || ""}: ${what}${c.action === "assign" && c.assignee ? " a " + c.assignee : ""}${doc} por ${c.by || "outro fiscal"}.`);
}

// ---- router ----------------------------------------------------------------
const PAGES = [
  [/^#\/sensor\/(.+)$/, "overview", (m) => sensorView(decodeURIComponent(m[1]))],
  [/^#\/alertas/, "alerts", () => alertsView()],
  [/^#\/codigos(?:\/(.+))?$/, "codes", (m) => codesView(m[1] ? decodeURIComponent(m[1]) : "")],
  [/^#\/notificacoes/, "notify", () => notify.page($("#view"))],
  [/^#\/metrologia/, "metrology", () => calibration.view($("#view"))],
  [/^#\/relatorios/, "reports", () => reports.view($("#view"))],
  [/^#\/casos/, "cases", () => cases.view($("#view"))],
  [/^#\/administracao/, "admin", () => admin.page($("#view"))],
];
function route() {
  if (!S.me) return;
  const hash = location.hash || "#/";
  document.querySelectorAll("nav a").forEach((a) => a.classList.remove("active"));
  let nav = "overview", make = () => overviewView();
  for (const [re, n, fn] of PAGES) {
    const m = hash.match(re);
    if (m) { nav = n; make = () => fn(m); break; }
  }
  const a = document.querySelector(`nav a[data-nav="${nav}"]`);
  if (a) a.classList.add("active");
  S.view = make();
}
window.addEventListener("hashchange", route);

boot();
