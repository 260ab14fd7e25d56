// The municipal codes (#/codigos/{id}): each code's limits by zone and
// period, its hour rules and its procedure, from GET /api/v1/codes.
import { $, api, db, fill, h } from "./lib.js";
import { S, label, labels } from "./state.js";

export async function codeView(id) {
  if (!id) return null;
  if (S.codeViews.has(id)) return S.codeViews.get(id);
  const v = await api("/api/v1/codes/" + encodeURIComponent(id));
  S.codeViews.set(id, v);
  return v;
}

// loadCodes: the codes' summaries (municipality, state, in force), once.
export async function loadCodes() {
  S.codes = S.codes || await api("/api/v1/codes", { feature: "A consulta aos códigos" });
  return S.codes;
}

const days = (d) => d && d.length ? " (" + labels("day", d) + ")" : "";

export function codesView(id) {
  const root = $("#view");
  const sel = h("select", { id: "code-select", "aria-label": "Código municipal", onchange: () => { location.hash = "#/codigos/" + encodeURIComponent(sel.value); } });
  const body = h("div");
  root.replaceChildren(h("h1", {}, "Códigos de Posturas"), h("div", { class: "toolbar" }, h("label", {}, "Município ", sel)), body);
  (async () => {
    try {
      const list = await loadCodes();
      sel.replaceChildren(...list.map((c) => h("option", { value: c.id }, `${c.municipality}/${c.state}${c.in_force ? "" : " (revogado)"}`)));
      const want = id || (S.filter && (list.find((c) => c.id === S.filter || c.municipality === S.filter) || {}).id) || (list[0] && list[0].id);
      if (!want) { body.replaceChildren(h("p", { class: "muted" }, "Nenhum código carregado.")); return; }
      sel.value = want;
      renderCode(body, await codeView(want));
    } catch (e) { body.replaceChildren(h("p", { class: "error" }, e.message)); }
  })();
  return {};
}

// limitsTable: zones × periods → the limits with their articles.
function limitsTable(c, zoneLabel) {
  if (!c.limits.length) return h("p", { class: "muted" }, "Este código não fixa limite numérico em decibéis.");
  const periods = [];
  const key = (r) => `${r.period ? label("period", r.period) : ""} ${r.window ? r.window.from + "–" + r.window.to + days(r.window.days) : "24 h"}`;
  for (const r of c.limits) if (!periods.includes(key(r))) periods.push(key(r));
  const zonesOf = (r) => r.zones && r.zones.length ? r.zones : ["*"];
  const zones = [...new Set(c.limits.flatMap(zonesOf))];
  const cell = (z, p) => c.limits.filter((r) => key(r) === p && zonesOf(r).includes(z));
  return h("div", { class: "table-wrap" }, h("table", { id: "limits" },
    h("thead", {}, h("tr", {}, h("th", {}, "zona"), periods.map((p) => h("th", {}, p)))),
    h("tbody", {}, zones.map((z) => h("tr", {}, h("th", {}, z === "*" ? "todas as zonas" : (zoneLabel[z] || label("zone", z))),
      periods.map((p) => h("td", {}, cell(z, p).map((r) => h("div", { title: r.quote }, h("b", {}, db(r.limit_db) + " dB(A)"), " ", r.article)))))))));
}

function rulesTable(rules, zoneLabel) {
  if (!rules.length) return h("p", { class: "muted" }, "Nenhuma regra de horário.");
  return h("div", { class: "table-wrap" }, h("table", { id: "rules" },
    h("thead", {}, h("tr", {}, h("th", {}, "regra"), h("th", {}, "tipo"), h("th", {}, "quando / onde"), h("th", {}, "artigo"))),
    h("tbody", {}, rules.map((r) => h("tr", {},
      h("td", {}, r.label || r.id, h("details", {}, h("summary", {}, "texto"), h("div", { class: "quote" }, r.quote))),
      h("td", {}, label("rule_kind", r.kind)),
      h("td", {}, describe(r, zoneLabel)),
      h("td", {}, r.article))))));
}

function renderCode(body, c) {
  const zoneLabel = Object.fromEntries((c.zones || []).map((z) => [z.id, z.label || label("zone", z.id)]));
  fill(body,
    h("p", {}, h("b", {}, c.title), " — ", c.law_title, " — versão ", c.version, c.in_force ? "" : h("span", { class: "error" }, ` — REVOGADO por ${c.revoked_by}`)),
    h("h2", {}, "Limites de nível (LAeq; infração só acima do limite)"), limitsTable(c, zoneLabel),
    h("h2", {}, "Horários, proibições e demais regras"), rulesTable(c.rules.filter((r) => r.kind !== "out_of_scope"), zoneLabel),
    h("h2", {}, "Procedimento"),
    h("p", {}, c.notice ? `${c.notice} (${c.notice_article})${c.prazo_max_days ? `, prazo de até ${c.prazo_max_days} dias fixado pelo fiscal` : ""}` : "Sem notificação preliminar: lavra-se diretamente o auto de infração.",
      c.auto ? h("br") : null, c.auto ? `${c.auto} (${c.auto_article})` : null),
    h("details", {}, h("summary", {}, "Quadro completo (texto)"), h("pre", { class: "schedule" }, c.schedule_text)));
}

function describe(r, zoneLabel) {
  const parts = [];
  if (r.window) parts.push(`${r.window.from}–${r.window.to}${days(r.window.days)}`);
  if (r.max_duration_s) parts.push(`por mais de ${r.max_duration_s} s`);
  if (r.min_interval_s) parts.push(`intervalo mínimo de ${r.min_interval_s} s`);
  if (r.radius_m) parts.push(`a menos de ${r.radius_m} m`);
  if (r.zones && r.zones.length) parts.push("zonas: " + r.zones.map((z) => zoneLabel[z] || label("zone", z)).join(", "));
  if (r.sources && r.sources.length) parts.push("fontes: " + labels("source", r.sources));
  if (r.establishments && r.establishments.length) parts.push("estabelecimentos: " + labels("establishment", r.establishments));
  for (const e of r.schedule || []) parts.push(labels("day", e.days) + ": " + (e.closed ? "fechado" : `${e.open ? "abre " + e.open + ", " : ""}encerra ${e.close}${e.close_next_day ? " do dia seguinte" : ""}`));
  if (r.why) parts.push(r.why);
  return parts.join("; ") || "—";
}
