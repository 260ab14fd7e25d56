// Sossego dashboard: the "Casos" page (#/casos) and the case line of the
// alert cards. Every case (the documents drawn up for an alert: notice or
// relatório, then the auto de infração) with its state, next deadline and
// days left from GET /api/v1/cases; a party's history by CNPJ/CPF from
// GET /api/v1/parties/{doc} (docs/api.md). app.js routes here (view) and
// each alert card shows alertLine(a).
import { TZ, api, h } from "./lib.js";
import { S, codeTitle, municipalityName } from "./state.js";

const fmtDate = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric" });
const fmtDT = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
const date = (v) => v ? fmtDate.format(new Date(v)) : "—";
const brl = (v) => Number(v).toLocaleString("pt-BR", { style: "currency", currency: "BRL" });
const KINDS = { notificacao_preliminar: "Notificação Preliminar", intimacao_preliminar: "Intimação Preliminar", notificacao_intimacao: "Notificação/Intimação", relatorio_constatacao: "Relatório de Constatação", auto_de_infracao: "Auto de Infração" };

// 12.345.678/0001-95, 111.444.777-35.
function docText(d) {
  if (/^\d{14}$/.test(d)) return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
  if (/^\d{11}$/.test(d)) return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`;
  return d || "—";
}
function daysText(n) {
  if (n > 1) return `faltam ${n} dias`;
  if (n === 1) return "falta 1 dia";
  if (n === 0) return "vence hoje";
  return n === -1 ? "vencido há 1 dia" : `vencido há ${-n} dias`;
}
function deadlineText(nd) {
  return `${nd.label} até ${nd.last_day} (${daysText(nd.days_left)})`;
}

// ---- the alert card's case line ------------------------------------------
// Lines ask in batches: every card rendered in the same turn is one request.
const waiting = new Map(); // alert id → [line elements]
let timer = null;
function ask(id, el) {
  if (!waiting.has(id)) waiting.set(id, []);
  waiting.get(id).push(el);
  if (!timer) timer = setTimeout(flush, 0);
}
async function flush() {
  timer = null;
  const batch = new Map(waiting);
  waiting.clear();
  const ids = [...batch.keys()];
  for (let i = 0; i < ids.length; i += 200) {
    const part = ids.slice(i, i + 200);
    let data;
    try {
      data = await api("/api/v1/cases?page_size=200&alert=" + part.map(encodeURIComponent).join(","), { feature: "A lista de casos" });
    } catch (e) { continue; } // the card simply shows no case line (e.g. an admin's session)
    const byAlert = new Map((data.cases || []).map((c) => [c.alert_id, c]));
    for (const id of part) for (const el of batch.get(id)) showLine(el, byAlert.get(id));
  }
}
function showLine(el, c) {
  if (!c) { el.hidden = true; el.replaceChildren(); delete el.dataset.state; return; }
  el.hidden = false;
  el.dataset.state = c.state;
  el.classList.toggle("overdue", !!c.overdue);
  el.replaceChildren(h("a", { href: "#/casos?alert=" + encodeURIComponent(c.alert_id) }, "Caso"), ": " + c.state_label +
    (c.next_deadline ? " — " + deadlineText(c.next_deadline) : ""));
}
function alertLine(a) {
  const el = h("div", { class: "case-line", "data-case-line": a.id, hidden: true });
  if (a.kind !== "no_data") ask(a.id, el);
  return el;
}
// onCase: a workflow change (app.js's live feed) refreshes the lines of
// its alert.
function onCase(c) {
  if (!c || !c.alert_id) return;
  document.querySelectorAll(`[data-case-line="${CSS.escape(c.alert_id)}"]`).forEach((el) => ask(c.alert_id, el));
}

// openParty shows in the party box the history of a CNPJ/CPF, as the
// ladder of penalties counts it.
async function openParty(party, doc) {
  party.hidden = false;
  party.replaceChildren(h("p", { class: "muted" }, "carregando o histórico…"));
  let p;
  try { p = await api("/api/v1/parties/" + encodeURIComponent(doc), { feature: "O histórico da parte" }); } catch (e) {
    party.replaceChildren(h("p", { class: "error" }, e.message)); return;
  }
  const close = h("button", { type: "button", class: "secondary", id: "party-close", onclick: () => { party.hidden = true; party.replaceChildren(); } }, "Fechar");
  const head = h("h2", {}, `Histórico de ${p.party.name || "parte sem cadastro"} — ${docText(p.party.document)}`);
  if (!p.known) { party.replaceChildren(head, h("p", { class: "muted" }, "Nenhum documento registrado para este CNPJ/CPF."), close); return; }
  const counts = Object.entries(p.prior_infractions || {}).map(([code, list]) =>
    h("li", { "data-code": code }, `${codeTitle(code)}: ${list.length} ${list.length === 1 ? "infração anterior conta" : "infrações anteriores contam"} para a gradação da próxima penalidade` +
      (list.length ? " (" + list.map((x) => x.Ref + (x.Punished ? ", autuado e punido" : "")).join("; ") + ")" : "")));
  const rows = p.documents.map((d) => h("tr", { "data-party-doc": d.id, class: d.counts_as_prior_infraction ? "counts" : "" },
    h("td", {}, h("b", {}, d.id), h("div", { class: "muted small" }, KINDS[d.kind] || d.title)),
    h("td", { "data-field": "code", "data-code": d.code_id }, codeTitle(d.code_id)),
    h("td", {}, d.state_label),
    h("td", {}, date(d.created_at)), h("td", {}, date(d.issued_at)), h("td", {}, date(d.ciencia_at)),
    h("td", { class: "small" }, d.penalty || "—", d.amount_brl != null ? h("div", {}, brl(d.amount_brl)) : null),
    h("td", { "data-field": "counts" }, d.counts_as_prior_infraction ? "sim" + (d.punished ? " (punido)" : "") : "não")));
  party.replaceChildren(head, p.party.address ? h("p", { class: "muted" }, p.party.address) : null,
    h("p", {}, "Estes registros são os que a gradação das penalidades usa: cada notificação ou auto emitido (não rascunho, não cancelado) conta como infração anterior; o relatório de constatação não conta (o auto dele, sim)."),
    h("ul", { id: "party-counts" }, counts),
    h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Documento", "Lei", "Estado", "Criado", "Emitido", "Ciência/recusa", "Penalidade", "Conta na gradação"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows))), close);
  party.scrollIntoView({ block: "nearest" });
}

// caseRow: one case of the list; its party's CNPJ/CPF opens the history.
function caseRow(c, party) {
  const nd = c.next_deadline;
  return h("tr", { "data-case": c.id, "data-state": c.state, class: c.overdue ? "overdue" : "" },
    h("td", {}, h("b", {}, c.id), h("div", { class: "muted small" }, (c.documents || []).slice(1).map((d) => d.id).join(", ")),
      h("div", { class: "small" }, h("a", { href: "#/alertas/" + encodeURIComponent(c.alert_id) }, "alerta"))),
    h("td", {}, c.municipality ? municipalityName(c.municipality, c.code_id) : codeTitle(c.code_id)),
    h("td", {}, c.party.name, h("div", {}, h("button", { type: "button", class: "link", "data-party": c.party.document, onclick: () => openParty(party, c.party.document) }, docText(c.party.document)))),
    h("td", {}, c.party.address, c.site_address && c.site_address !== c.party.address ? h("div", { class: "muted small" }, "medição: " + c.site_address) : null),
    h("td", { "data-field": "state" }, c.state_label),
    h("td", { "data-field": "deadline" }, nd ? [h("div", {}, nd.label + " até " + nd.last_day), h("div", { class: nd.overdue ? "error" : nd.days_left <= 2 ? "near" : "muted" }, daysText(nd.days_left))] : h("span", { class: "muted" }, "sem prazo correndo")),
    h("td", { class: "small" }, c.penalty || "—"));
}

// ---- the page -------------------------------------------------------------
function view(root) {
  const me = S.me || {};
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const st = { page: 1, seq: 0, states: null, alert: params.get("alert") || "" };
  const muni = h("select", { id: "cases-municipality", "aria-label": "Município" }, h("option", { value: "" }, "todos"));
  const state = h("select", { id: "cases-state", "aria-label": "Estado" }, h("option", { value: "" }, "todos"));
  const overdue = h("input", { type: "checkbox", id: "cases-overdue" });
  const mine = h("input", { type: "checkbox", id: "cases-mine" });
  const address = h("input", { type: "search", id: "cases-address", placeholder: "rua, número, bairro", "aria-label": "Endereço" });
  const sort = h("select", { id: "cases-sort", "aria-label": "Ordem" }, h("option", { value: "deadline" }, "próximo prazo"), h("option", { value: "recent" }, "último ato"));
  const msg = h("p", { class: "muted", id: "cases-msg", role: "status" });
  const table = h("div", { class: "table-wrap", id: "cases-table" });
  const pager = h("div", { class: "toolbar pager", id: "cases-pager" });
  const party = h("div", { id: "party-history", class: "panel", hidden: true });
  const alertNote = h("p", { id: "cases-alert", class: "muted", hidden: !st.alert });
  const form = h("form", { class: "toolbar cases-form", onsubmit: (ev) => { ev.preventDefault(); st.page = 1; load(); } },
    h("label", {}, "Município ", muni), h("label", {}, "Estado ", state),
    h("label", {}, overdue, " só prazos vencidos"), h("label", {}, mine, " meus casos"),
    h("label", {}, "Endereço ", address), h("label", {}, "Ordem ", sort), h("button", { type: "submit", id: "cases-go" }, "Filtrar"));
  if (me.role === "admin") {
    root.replaceChildren(h("h1", {}, "Casos"), h("p", { class: "banner" }, "Os casos são vistos por fiscais e operadores; o perfil de administrador não os acessa."));
    return { live() {} };
  }
  root.replaceChildren(h("h1", {}, "Casos"),
    h("p", { class: "muted" }, "Cada caso reúne os documentos de um alerta (notificação ou relatório, depois o auto de infração), com o estado do último documento e o próximo prazo contado pelas regras do código municipal, no horário de Brasília."),
    h("div", { class: "panel" }, form, alertNote, msg), party, table, pager);
  if (st.alert) {
    alertNote.replaceChildren("Somente o caso do alerta " + st.alert + " ", h("button", { type: "button", class: "link", id: "cases-all", onclick: () => { st.alert = ""; alertNote.hidden = true; st.page = 1; load(); } }, "mostrar todos"));
  }
  for (const el of [muni, state, sort]) el.addEventListener("change", () => { st.page = 1; load(); });
  for (const el of [overdue, mine]) el.addEventListener("change", () => { st.page = 1; load(); });

  function municipalities() {
    const ids = [...new Set([...S.sensors.values()].map((s) => s.municipality).filter(Boolean))].sort();
    if (ids.length && muni.options.length === 1) muni.append(...ids.map((m) => h("option", { value: m }, municipalityName(m))));
  }
  function query() {
    const q = new URLSearchParams();
    if (muni.value) q.set("municipality", muni.value);
    if (state.value) q.set("state", state.value);
    if (overdue.checked) q.set("overdue", "true");
    if (mine.checked) q.set("mine", "true");
    if (address.value.trim()) q.set("address", address.value.trim());
    if (sort.value !== "deadline") q.set("sort", sort.value);
    if (st.alert) q.set("alert", st.alert);
    q.set("page", String(st.page));
    q.set("page_size", "25");
    return q.toString();
  }
  async function load() {
    municipalities();
    const seq = ++st.seq;
    msg.textContent = "carregando…";
    msg.className = "muted";
    let data;
    try { data = await api("/api/v1/cases?" + query(), { feature: "A lista de casos" }); } catch (e) {
      if (seq !== st.seq) return;
      msg.textContent = e.message; msg.className = "error"; return;
    }
    if (seq !== st.seq) return;
    if (!st.states && data.states) {
      st.states = data.states;
      state.append(...data.states.map((s) => h("option", { value: s.id }, s.label)));
    }
    msg.textContent = data.total === 0 ? "Nenhum caso com estes filtros." :
      `${data.total} ${data.total === 1 ? "caso" : "casos"}; situação em ${fmtDT.format(new Date(data.now))} (horário de Brasília).`;
    msg.dataset.total = String(data.total);
    render(data);
  }
  function render(data) {
    const rows = (data.cases || []).map((c) => caseRow(c, party));
    table.replaceChildren(rows.length ? h("table", { class: "cases" },
      h("thead", {}, h("tr", {}, ["Caso", "Município", "Parte (CNPJ/CPF)", "Endereço", "Estado", "Próximo prazo", "Penalidade"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)) : "");
    const pages = Math.max(1, data.pages || 1);
    pager.replaceChildren(
      h("button", { type: "button", class: "secondary", id: "cases-prev", disabled: st.page <= 1, onclick: () => { st.page--; load(); } }, "‹ anterior"),
      h("span", { id: "cases-page" }, `página ${data.page} de ${pages}`),
      h("button", { type: "button", class: "secondary", id: "cases-next", disabled: st.page >= pages, onclick: () => { st.page++; load(); } }, "próxima ›"));
  }


  load();
  if (params.get("parte")) openParty(party, params.get("parte"));
  return { live() {}, caseUpdate() { load(); } };
}

export { view, alertLine, onCase };
