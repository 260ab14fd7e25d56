// Sossego dashboard — the municipal holidays section of the "Administração"
// page: each municipality's decreed days (a holiday set by municipal law,
// every year, or a day decreed once, feriado or ponto facultativo), with the
// act that set it and who set it; admins add and remove them (a removal
// needs its reason), everyone reads them and their change log. They count
// for the codes' schedules, the reports and the notices' deadlines in
// business days. API: /api/v1/holidays, /api/v1/holidays/history,
// /api/v1/admin/holidays (docs/holidays.md).
import { api, dateBR, fill as put, fmtDateTime, h, toast } from "./lib.js";
import { field } from "./forms.js";
import { S, municipalityName } from "./state.js";

const isAdmin = () => (S.me || {}).role === "admin";
const KINDS = { feriado: "feriado", ponto_facultativo: "ponto facultativo" };

function holidayForm(municipalities, done) {
  const f = h("form", { class: "step-form admin-form", "data-form": "holiday" });
  const muni = h("select", { name: "municipality" }, municipalities.map((id) => h("option", { value: id }, municipalityName(id))));
  const yearly = h("input", { type: "radio", name: "recurrence", value: "yearly", checked: true });
  const once = h("input", { type: "radio", name: "recurrence", value: "once" });
  const md = h("input", { name: "month_day", placeholder: "ex.: 19/03", inputmode: "numeric", autocomplete: "off" });
  const date = h("input", { name: "date", type: "date" });
  const since = h("input", { name: "since", type: "date" });
  const name = h("input", { name: "name", required: true, placeholder: "ex.: Padroeiro do município" });
  const act = h("input", { name: "act", required: true, placeholder: "ex.: Lei Municipal nº 1.234/2019" });
  const kind = h("select", { name: "kind" }, Object.entries(KINDS).map(([k, l]) => h("option", { value: k }, l)));
  const err = h("p", { class: "error", role: "alert", hidden: true, "data-error": "holiday" });
  const yearlyBox = h("div", { class: "row" }, field("Dia do ano (dd/mm) *", md), field("Em vigor desde", since, "data da lei; em branco: todo ano"));
  const onceBox = h("div", { class: "row", hidden: true }, field("Data *", date));
  const toggle = () => { yearlyBox.hidden = !yearly.checked; onceBox.hidden = yearly.checked; };
  yearly.addEventListener("change", toggle);
  once.addEventListener("change", toggle);
  f.append(h("p", { class: "form-heading" }, "Novo dia decretado"), field("Município *", muni),
    h("fieldset", {}, h("legend", {}, "Repetição"),
      h("label", { class: "inline" }, yearly, " todo ano (feriado fixado por lei municipal)"),
      h("label", { class: "inline" }, once, " uma vez (decreto para um dia)")),
    yearlyBox, onceBox, field("Nome *", name), field("Ato legal *", act), field("Tipo", kind, "o ponto facultativo também conta como dia não útil nos prazos"), err,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Cadastrar dia"), h("button", { type: "button", class: "secondary", onclick: () => done(null) }, "Fechar")));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { municipality: muni.value, name: name.value, act: act.value, kind: kind.value };
    if (yearly.checked) {
      body.month_day = md.value.trim();
      body.since = since.value;
    } else body.date = date.value;
    try {
      const e = await api("/api/v1/admin/holidays", { method: "POST", body, feature: "O cadastro de feriados municipais" });
      toast(`${e.name} (${e.when}) cadastrado para ${e.municipality_title}.`);
      done(e);
    } catch (e) { err.hidden = false; err.replaceChildren(e.message); }
  });
  return f;
}

// removeForm asks the reason of a removal, which the change log keeps.
function removeForm(e, done) {
  const f = h("form", { class: "inline-form", "data-form": "remove-holiday" });
  const reason = h("input", { name: "reason", required: true, placeholder: "motivo (fica no histórico)", "aria-label": "Motivo da remoção" });
  const err = h("span", { class: "error", role: "alert", hidden: true });
  f.append(reason, h("button", { type: "submit", class: "danger" }, "Confirmar remoção"), h("button", { type: "button", class: "secondary", onclick: () => done(false) }, "Cancelar"), err);
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api(`/api/v1/admin/holidays/${e.id}?reason=${encodeURIComponent(reason.value)}`, { method: "DELETE", feature: "O cadastro de feriados municipais" });
      toast(`${e.name} (${e.when}) removido.`);
      done(true);
    } catch (x) { err.hidden = false; err.replaceChildren(x.message); }
  });
  return f;
}

function historyList(changes) {
  if (!changes.length) return h("p", { class: "muted" }, "Nenhuma alteração registrada.");
  return h("ol", { class: "log", "data-list": "holiday-history" }, changes.map((c) => {
    const e = c.entry, day = e.date ? dateBR(e.date) : `todo ano em ${dateBR("0000-" + e.month_day).slice(0, 5)}`;
    const what = c.action === "removed" ? "removeu" : "cadastrou";
    return h("li", {}, `${fmtDateTime.format(new Date(c.at))} — ${c.by} ${what} ${e.name} (${day}; ${KINDS[e.kind] || e.kind}; ${e.act})` + (c.reason ? ` — motivo: ${c.reason}` : ""));
  }));
}

async function load(box) {
  let list, hist;
  try {
    [list, hist] = await Promise.all([api("/api/v1/holidays", { feature: "O cadastro de feriados municipais" }),
      api("/api/v1/holidays/history", { feature: "O cadastro de feriados municipais" })]);
  } catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const admin = isAdmin(), reload = () => load(box), formBox = h("div", {});
  const municipalities = [...(list.municipalities || [])].sort((a, b) => municipalityName(a).localeCompare(municipalityName(b), "pt-BR"));
  const rows = (list.holidays || []).map((e) => {
    const cell = h("td", {});
    const again = () => put(cell, h("button", { type: "button", class: "secondary", "data-remove-holiday": String(e.id),
      onclick: () => put(cell, removeForm(e, (gone) => gone ? reload() : again())) }, "Remover"));
    if (admin) again();
    return h("tr", { "data-holiday": String(e.id) }, h("td", {}, e.municipality_title), h("td", {}, e.when), h("td", {}, e.name), h("td", {}, e.kind_label),
      h("td", {}, e.act), h("td", {}, e.set_by ? `${e.set_by}, ${fmtDateTime.format(new Date(e.set_at))}` : ""), admin ? cell : null);
  });
  const heads = ["município", "dia", "nome", "tipo", "ato legal", "cadastrado por"];
  if (admin) heads.push("");
  put(box,
    rows.length ? h("div", { class: "table-wrap" }, h("table", { "data-table": "holidays" },
      h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))), h("tbody", {}, rows)))
      : h("p", { class: "muted", "data-empty": "holidays" }, "Nenhum dia decretado: valem só os feriados que cada código já prevê."),
    admin ? h("div", { class: "toolbar" }, h("button", { type: "button", class: "secondary", id: "new-holiday",
      onclick: () => { put(formBox, holidayForm(municipalities, (saved) => { put(formBox); if (saved) reload(); })); formBox.querySelector("select").focus(); } }, "Novo dia decretado"))
      : h("p", { class: "muted", id: "holidays-readonly" }, "Somente administradores cadastram e removem dias decretados."),
    formBox,
    h("details", { id: "holiday-history" }, h("summary", {}, "Histórico de alterações"), historyList(hist.history || [])));
}

// holidaysSection: the heading, the explanation and the list.
export function holidaysSection() {
  const box = h("div", { id: "admin-holidays" }, "carregando…");
  load(box);
  return [h("h2", { id: "holidays-heading" }, "Feriados municipais"),
    h("p", { class: "muted" }, "Dias que o município decretou além dos que o código já prevê. Contam para os limites de horário dos alertas, os relatórios e os prazos em dias úteis das notificações."),
    box];
}
