// How a sensor's value is shown: its data age, its margin to the limit in
// force (the server's: the hub and the API send the limit with each
// value), its clock and its period.
//
// A value is "now" only when its record is: live (< 5 s old), late (a
// record received well after its own time — a replayed backlog — shown
// with its own date and time), stale (nothing received for STALE_MS), or
// its gateway offline. Colours are for live values only; a lost connection
// to the server greys everything.
import { $, banner, db, fmtDateTime, fmtHM, fmtTime } from "./lib.js";
import { S, gatewayOf } from "./state.js";

export const LIVE_MS = 5000, STALE_MS = 30000;
export const GRADES = { class1: "classe 1", class2: "classe 2", screening: "triagem (indicativo)" };

export const serverNow = () => Date.now() + (S.clockOffset || 0);

const DISCONNECTED = "Sem conexão com o servidor: os valores mostrados não são de agora. Reconectando…";

export function setConnected(on) {
  S.connected = on;
  document.body.classList.toggle("disconnected", !on);
  if (!on) S.disconnectedAt = S.disconnectedAt || Date.now(); else S.disconnectedAt = 0;
  if (!on && S.me) banner(DISCONNECTED);
  else if (on && $("#banner").textContent === DISCONNECTED) banner("");
}

// acceptLevel takes a level from the hub; a late record does not hide a
// newer value already shown.
export function acceptLevel(s, l) {
  const t = Date.parse(l.t), rec = l.received_at ? Date.parse(l.received_at) : t;
  const cur = s.level;
  if (rec - t > LIVE_MS && cur && Date.parse(cur.t) > t) { s.lateLevel = l; return; }
  s.level = l;
  s.lateLevel = rec - t > LIVE_MS ? l : null;
}

// freshness: {state: none|disconnected|offline|stale|late|live|recent, text}.
export function freshness(s) {
  const l = s.level;
  if (!l || !l.t) return { state: "none", text: "sem leituras" };
  const now = serverNow(), t = Date.parse(l.t), rec = l.received_at ? Date.parse(l.received_at) : t;
  const g = gatewayOf(s);
  const when = fmtDateTime.format(new Date(t));
  if (S.connected === false) return { state: "disconnected", text: `sem conexão com o servidor; último valor de ${when}` };
  if (g && g.state === "offline") return { state: "offline", text: `gateway offline; sem dados desde ${when}` };
  if (now - Math.max(t, rec) > STALE_MS) return { state: "stale", text: `sem dados desde ${when}` };
  if (rec - t > LIVE_MS) return { state: "late", text: `atrasado: registro de ${when}` };
  if (now - t <= LIVE_MS) return { state: "live", text: "ao vivo" };
  return { state: "recent", text: `há ${Math.round((now - t) / 1000)} s (${fmtTime.format(new Date(t))})` };
}

export const ageClass = (f) => "age-" + f.state;

const hasLimit = (l) => l && l.limit_db !== undefined && l.limit_db !== null;
const margin = (l) => l.margin_db !== undefined && l.margin_db !== null ? l.margin_db : l.laeq_db - l.limit_db;

export function marginClass(l) {
  if (!hasLimit(l)) return "none";
  const m = margin(l);
  return m > 0 ? "over" : m > -3 ? "near" : "ok";
}

export function marginText(l) {
  if (!hasLimit(l)) return "sem limite numérico agora";
  const m = margin(l);
  if (Math.abs(m) < 0.05) return "no limite";
  return m > 0 ? `+${db(m)} dB acima do limite` : `${db(-m)} dB abaixo do limite`;
}

export function limitText(l) { return hasLimit(l) ? `limite ${db(l.limit_db)} dB(A)` : ""; }

export function clockText(s) {
  const g = gatewayOf(s);
  const synced = s.level && s.level.clock_synced !== undefined ? s.level.clock_synced : g && g.clock_synced;
  if (synced === undefined || synced === null) return "relógio: desconhecido";
  return synced ? "relógio sincronizado" : "relógio NÃO sincronizado";
}

export function periodText(l) {
  if (!l || !l.period) return "";
  let t = l.period_label || ("período " + l.period);
  if (l.period_end) t += " até " + fmtHM.format(new Date(l.period_end));
  return t;
}
