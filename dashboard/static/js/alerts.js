// The alerts inbox (#/alertas): one card per alert with what was measured
// against which article, its triage (ack, assignee), its case, its
// notifications and calibration note, and the fiscal's actions; the
// alert's document opens in the card (notice.js).
import { $, api, db, download, fill, fmtDateTime, h } from "./lib.js";
import { S, codeTitle, municipalityName } from "./state.js";
import { stepForm } from "./forms.js";
import { alertPath, docPanel } from "./notice.js";
import * as notify from "./notify.js";
import * as cases from "./cases.js";
import * as calibration from "./calibration.js";

const ALERT_STATES = { pending: "pendente", firing: "em curso", resolved: "encerrado", cancelled: "cancelado", no_data: "sem dados" };

export function triageText(id) {
  const t = S.triage.get(id);
  const parts = [];
  if (t && t.acked) parts.push(`Reconhecido por ${t.acked_name || t.acked_by}${t.acked_at ? " em " + fmtDateTime.format(new Date(t.acked_at)) : ""}`);
  else parts.push("Ainda não reconhecido");
  if (t && t.assignee) parts.push(`atribuído a ${t.assignee}` + (t.assigned_by && t.assigned_by !== t.assignee ? ` (por ${t.assigned_by})` : ""));
  else parts.push("sem fiscal responsável");
  return parts.join(" · ");
}

// The measurement line: level against the limit, or why there is no data.
function measured(a) {
  if (a.kind === "no_data") return " — sem dados (" + (a.reason === "gateway_offline" ? "gateway offline" : "silencioso") + ")";
  const over = `${a.laeq_db > a.limit_db ? "+" : ""}${db(a.laeq_db - a.limit_db)} dB${a.margin_db ? `; margem de incerteza do medidor ${db(a.margin_db)} dB` : ""}`;
  return ` — ${db(a.laeq_db)} dB(A) para limite de ${db(a.limit_db)} dB(A) (${over}), ${a.period_label || a.period || ""}`;
}

function summary(a) {
  const state = a.kind === "no_data" && a.state !== "resolved" ? "no_data" : a.state;
  const since = a.firing_at || a.pending_at;
  return h("div", { class: "summary" },
    h("div", { class: "facts" }, h("span", { class: "state" }, ALERT_STATES[state] || state), h("span", {}, municipalityName(a.municipality, a.code_id)),
      h("span", {}, since ? "desde " + fmtDateTime.format(new Date(since)) : ""),
      a.screening ? h("span", { class: "grade screening" }, "medidor de triagem: indicativo") : null,
      // readings replayed after an outage: the alert is about the past and was known only later
      a.detected_at && a.firing_at && new Date(a.detected_at) - new Date(a.firing_at) > 120000 ?
        h("span", { class: "late", "data-late": "" }, "detectado " + fmtDateTime.format(new Date(a.detected_at)) + ", com atraso (leituras reenviadas pelo gateway)") : null,
      // the time of these readings is uncertain: no notice is drafted from them
      a.unsynced_records > 0 ? h("span", { class: "late", "data-unsynced": "" },
        `relógio do gateway não sincronizado em ${a.unsynced_records} leituras: não gera notificação`) : null),
    h("div", {}, h("a", { href: "#/sensor/" + encodeURIComponent(a.sensor) }, h("b", {}, a.sensor)), measured(a)),
    a.article ? h("div", {}, h("b", {}, a.article), a.code_id ? ` — ${codeTitle(a.code_id)}${a.code_version ? ", versão " + a.code_version : ""}` : "") : null,
    a.quote ? h("div", { class: "quote" }, "“" + a.quote + "”") : null,
    a.establishment ? h("div", { class: "muted" }, "Estabelecimento: " + a.establishment) : null);
}

// The inbox's context: c = {list, fiscal, docs, sel(attr, id)}.
function say(c, id, text, cls = "") { const out = c.sel("data-result", id); if (out) { out.className = "result " + cls; out.textContent = text; } }

async function run(c, id, fn, ok) {
  say(c, id, "enviando…", "muted");
  try { const msg = await fn(); say(c, id, msg || ok); } catch (e) { say(c, id, e.message, "error"); }
}

function refreshTriage(c, id) {
  const line = c.sel("data-triage", id);
  if (line) line.textContent = triageText(id);
  const ack = $(`[data-alert="${CSS.escape(id)}"] [data-action="ack"]`, c.list);
  if (ack) ack.disabled = !!(S.triage.get(id) || {}).acked;
}

function actions(c, a) {
  const t = S.triage.get(a.id) || {};
  const exceedance = a.kind !== "no_data";
  return h("div", { class: "actions" },
    h("button", { type: "button", "data-action": "ack", disabled: !!t.acked, onclick: () => run(c, a.id, async () => {
      const v = await api(`${alertPath(a.id)}/ack`, { method: "POST", body: {}, feature: "Reconhecer alertas" });
      S.triage.set(a.id, v); refreshTriage(c, a.id);
    }, "Alerta reconhecido.") }, "Reconhecer"),
    h("button", { type: "button", class: "secondary", "data-action": "assign", onclick: () => toggleAssign(c, a) }, "Atribuir"),
    exceedance ? h("button", { type: "button", class: "secondary", "data-action": "notice", onclick: () => run(c, a.id, () => c.docs.openAlertDoc(a.id), "Documento aberto abaixo.") }, "Abrir documento") : null,
    exceedance ? h("button", { type: "button", class: "secondary", "data-action": "evidence", onclick: () => run(c, a.id, () => download(`${alertPath(a.id)}/evidence`, `evidencias-${a.id}.zip`, "O pacote de evidências"), "Pacote de evidências baixado.") }, "Baixar evidências") : null);
}

function toggleAssign(c, a) {
  const box = c.sel("data-assign", a.id);
  const close = () => { box.hidden = true; box.replaceChildren(); };
  if (!box.hidden) { close(); return; }
  const t = S.triage.get(a.id) || {};
  const who = S.assignees && S.assignees.length
    ? { name: "assignee", label: "Fiscal responsável", type: "select", options: S.assignees.map((u) => ({ value: u, label: u + (u === S.me.user ? " (eu)" : "") })), value: t.assignee || S.me.user }
    : { name: "assignee", label: "Usuário do fiscal responsável", required: true, value: t.assignee || S.me.user };
  box.replaceChildren(stepForm("assign", [who], "Atribuir", async (v) => {
    const res = await api(`${alertPath(a.id)}/assign`, { method: "POST", body: { assignee: v.assignee }, feature: "Atribuir alertas" });
    S.triage.set(a.id, res); refreshTriage(c, a.id);
    close();
    say(c, a.id, `Alerta atribuído a ${res.assignee}.`);
  }, close));
  box.hidden = false;
}

// card is one alert's card; the document opens in its [data-notice] box.
function card(c, a) {
  const el = h("article", { class: "alert " + a.state + (S.fresh && S.fresh.has(a.id) ? " new" : ""), "data-alert": a.id },
    summary(a),
    h("div", { class: "triage muted", "data-triage": a.id }, triageText(a.id)),
    cases.alertLine(a), // "Caso: … — prazo até …"
    c.fiscal ? actions(c, a) : null,
    h("div", { class: "assign-box", "data-assign": a.id, hidden: true }),
    h("div", { class: "result", "data-result": a.id, role: "status" }),
    notify.alertExtras(a),
    calibration.alertNote(a),
    h("div", { class: "notice", "data-notice": a.id, hidden: true }));
  el.addEventListener("animationend", () => { el.classList.remove("new"); if (S.fresh) S.fresh.delete(a.id); });
  return el;
}

export function alertsView() {
  const root = $("#view");
  const fiscal = S.me.role === "fiscal";
  const list = h("div", { class: "alerts", id: "alert-list" });
  const notifBtn = ("Notification" in window && Notification.permission === "default")
    ? h("button", { type: "button", class: "secondary", onclick: async () => { await Notification.requestPermission(); notifBtn.remove(); } }, "Ativar notificações do navegador") : null;
  fill(root, h("h1", {}, "Alertas"),
    h("div", { class: "toolbar" }, notifBtn, h("span", { class: "muted" }, fiscal ? "Novos alertas aparecem aqui na hora, com som." : "Somente fiscais podem agir sobre os alertas.")),
    notify.dutyLine(),
    S.alertsError ? h("p", { class: "banner" }, "Lista de alertas indisponível: " + S.alertsError) : null, list);
  S.unseen = 0;
  const items = new Map();
  const sel = (attr, id) => $(`[${attr}="${CSS.escape(id)}"]`, list);
  const c = { list, fiscal, sel, docs: docPanel((id) => sel("data-notice", id)) };
  function render() {
    const all = [...S.alerts.values()].sort((a, b) => (b.firing_at || b.pending_at || "").localeCompare(a.firing_at || a.pending_at || ""));
    items.clear();
    list.replaceChildren(...(all.length ? all.map((a) => { const el = card(c, a); items.set(a.id, el); return el; }) : [h("p", { class: "muted" }, "Nenhum alerta aberto.")]));
  }
  render();
  return {
    alert(a) {
      const old = items.get(a.id);
      const cur = S.alerts.get(a.id);
      if (old) {
        // Keep the open document and forms: replace only the summary.
        old.className = "alert " + cur.state + (S.fresh && S.fresh.has(a.id) ? " new" : "");
        old.querySelector(".summary").replaceWith(summary(cur));
        return;
      }
      const el = card(c, cur);
      if (items.size === 0) render(); else { list.prepend(el); items.set(a.id, el); }
    },
    caseUpdate(ch) {
      if (!ch.alert_id) return;
      refreshTriage(c, ch.alert_id);
      // Another fiscal changed the document on screen: show the new state.
      const box = sel("data-notice", ch.alert_id);
      if (box && !box.hidden && ch.by !== S.me.user && ch.notice_id) {
        const shown = box.dataset.doc;
        if (!shown || shown === ch.notice_id) c.docs.openDoc(ch.alert_id, ch.notice_id).catch((e) => say(c, ch.alert_id, e.message, "error"));
      }
    },
  };
}
