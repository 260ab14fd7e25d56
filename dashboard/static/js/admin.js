// Sossego dashboard — the "Administração" page (#/administracao): the
// users with their profile (admins add, edit and disable them) and each
// code's monetary units with their values per period of validity (admins
// add values; fiscais and operadores read) and the municipal holidays
// (holidays.js), after the calibration certificates' reminders
// (calibration.js), and the key that signs the evidence packages, with
// its fingerprint and history, for anyone to compare with a package. API:
// /api/v1/admin/users, /api/v1/units, /api/v1/admin/units (docs/users.md),
// /api/v1/calibration, /api/v1/evidence/key (docs/evidence.md).
import { TZ, api, fill as put, h, toast } from "./lib.js";
import { field } from "./forms.js";
import { S } from "./state.js";
import { holidaysSection } from "./holidays.js";
import { certificateReminders } from "./calibration.js";

const me = () => S.me || {};
const ROLES = { admin: "administrador", fiscal: "fiscal", operador: "operador" };
const fmtDT = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
const brl = (v) => "R$ " + Number(v).toLocaleString("pt-BR", { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const dateBR = (iso) => iso ? iso.split("-").reverse().join("/") : "";
const validity = (p) => p.to ? `de ${dateBR(p.from)} a ${dateBR(p.to)}` : `a partir de ${dateBR(p.from)}`;

// A form's error box: the API's list of problems, one a line.
function showError(box, e) {
  box.hidden = false;
  box.replaceChildren(e.message);
}
// Reads "4.938,24", "4938,24" or "4938.24" as a number; NaN otherwise.
function parseBRL(s) {
  let t = String(s).trim().replace(/^R\$\s*/, "");
  if (/^-?(\d{1,3}(\.\d{3})+|\d+)(,\d{1,4})?$/.test(t)) t = t.replace(/\./g, "").replace(",", ".");
  else if (!/^-?\d+(\.\d{1,4})?$/.test(t)) return NaN;
  return Number(t);
}

// ---- users ----------------------------------------------------------------
function userForm(u, done) {
  const isNew = !u;
  u = u || { role: "fiscal" };
  const f = h("form", { class: "step-form admin-form", "data-form": isNew ? "new-user" : "edit-user" });
  const name = h("input", { name: "name", required: true, autocomplete: "off", value: u.name || "", disabled: !isNew, placeholder: "ex.: maria.santos" });
  const role = h("select", { name: "role" }, Object.entries(ROLES).map(([k, l]) => h("option", { value: k, selected: u.role === k }, l)));
  const full = h("input", { name: "full_name", value: u.full_name || "", placeholder: "nome e sobrenome" });
  const mat = h("input", { name: "matricula", value: u.matricula || "", placeholder: "ex.: 12.345-6" });
  const email = h("input", { name: "email", type: "email", value: u.email || "", placeholder: "nome@prefeitura.gov.br" });
  const phone = h("input", { name: "phone", type: "tel", value: u.phone || "", placeholder: "(41) 99876-5432" });
  const pw = h("input", { name: "password", type: "password", autocomplete: "new-password", required: isNew, placeholder: isNew ? "pelo menos 10 caracteres" : "deixe em branco para manter" });
  const err = h("p", { class: "error", role: "alert", hidden: true, "data-error": "user" });
  f.append(isNew ? h("p", { class: "form-heading" }, "Novo usuário") : h("p", { class: "form-heading" }, `Editar ${u.name}`),
    field("Usuário (login) *", name), field("Papel *", role),
    field("Nome completo", full, "obrigatório para fiscal: impresso nas notificações e autos"),
    field("Matrícula", mat, "obrigatória para fiscal"), field("E-mail", email), field("Telefone", phone),
    field(isNew ? "Senha *" : "Nova senha", pw), err,
    h("div", { class: "actions" }, h("button", { type: "submit" }, isNew ? "Criar usuário" : "Salvar"),
      h("button", { type: "button", class: "secondary", onclick: () => done(null) }, "Fechar")));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { role: role.value, full_name: full.value, matricula: mat.value, email: email.value, phone: phone.value };
    try {
      let saved;
      if (isNew) saved = await api("/api/v1/admin/users", { method: "POST", body: { ...body, name: name.value.trim(), password: pw.value }, feature: "O cadastro de usuários" });
      else {
        if (pw.value) body.password = pw.value;
        saved = await api(`/api/v1/admin/users/${encodeURIComponent(u.name)}`, { method: "PATCH", body, feature: "O cadastro de usuários" });
      }
      toast(isNew ? `Usuário ${saved.name} criado.` : `Usuário ${saved.name} alterado.`);
      done(saved);
    } catch (e) { showError(err, e); }
  });
  return f;
}

async function loadUsers(box) {
  let data;
  try { data = await api("/api/v1/admin/users", { feature: "O cadastro de usuários" }); } catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const formBox = h("div", { id: "user-form" });
  const reload = () => loadUsers(box);
  const open = (u) => { put(formBox, userForm(u, (saved) => { put(formBox); if (saved) reload(); })); const first = formBox.querySelector("input:not([disabled])"); if (first) first.focus(); };
  const toggle = async (u) => {
    try {
      await api(`/api/v1/admin/users/${encodeURIComponent(u.name)}`, { method: "PATCH", body: { disabled: !u.disabled }, feature: "O cadastro de usuários" });
      toast(u.disabled ? `Usuário ${u.name} reativado.` : `Usuário ${u.name} desativado; as sessões dele foram encerradas.`);
      reload();
    } catch (e) { toast(e.message, "error"); }
  };
  const rows = (data.users || []).map((u) => h("tr", { "data-user": u.name, class: u.disabled ? "disabled" : "" },
    h("td", {}, h("b", {}, u.name), u.disabled ? h("div", { class: "muted" }, "desativado") : null),
    h("td", {}, ROLES[u.role] || u.role),
    h("td", {}, u.full_name || h("span", { class: "muted" }, u.role === "fiscal" ? "falta o nome completo" : "—")),
    h("td", {}, u.matricula || h("span", { class: "muted" }, u.role === "fiscal" ? "falta a matrícula" : "—")),
    h("td", {}, [u.email, u.phone].filter(Boolean).join(" · ") || "—"),
    h("td", { class: "row-actions" }, h("button", { type: "button", class: "link", "data-edit-user": u.name, onclick: () => open(u) }, "Editar"),
      h("button", { type: "button", class: "link", "data-toggle-user": u.name, onclick: () => toggle(u) }, u.disabled ? "Reativar" : "Desativar"))));
  put(box,
    h("div", { class: "toolbar" }, h("button", { type: "button", id: "new-user", onclick: () => open(null) }, "Novo usuário")),
    formBox,
    h("div", { class: "table-wrap" }, h("table", { "data-table": "users" },
      h("thead", {}, h("tr", {}, ["usuário", "papel", "nome completo", "matrícula", "contato", ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows))));
}

// ---- monetary units ---------------------------------------------------------
function unitForm(code, unit, done) {
  const f = h("form", { class: "step-form admin-form", "data-form": "unit-value" });
  const from = h("input", { name: "from", type: "date", required: true });
  const to = h("input", { name: "to", type: "date" });
  const value = h("input", { name: "value", required: true, inputmode: "decimal", placeholder: "ex.: 4.938,24" });
  const act = h("input", { name: "act", required: true, placeholder: "ex.: Decreto nº 1.234/2025, art. 1º" });
  const err = h("p", { class: "error", role: "alert", hidden: true, "data-error": "unit" });
  f.append(h("p", { class: "form-heading" }, `Novo valor do ${unit.id} — ${code.title}`),
    field("Início da vigência *", from), field("Fim da vigência", to, "em branco: vigente até novo valor (o valor em aberto anterior é encerrado na véspera)"),
    field("Valor em R$ *", value), field("Ato legal que fixou o valor *", act), err,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Cadastrar valor"), h("button", { type: "button", class: "secondary", onclick: () => done(null) }, "Fechar")));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = parseBRL(value.value);
    if (Number.isNaN(v)) { showError(err, new Error(`valor "${value.value}": use só dígitos, com vírgula decimal (ex.: 4.938,24)`)); return; }
    try {
      const p = await api("/api/v1/admin/units", { method: "POST", body: { code: code.code, unit: unit.id, from: from.value, to: to.value, value_brl: v, act: act.value }, feature: "O cadastro de unidades monetárias" });
      toast(`${p.unit}: ${brl(p.value_brl)} ${validity(p)} cadastrado.`);
      done(p);
    } catch (e) { showError(err, e); }
  });
  return f;
}

async function loadUnits(box) {
  let data;
  try { data = await api("/api/v1/units", { feature: "O cadastro de unidades monetárias" }); } catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const admin = me().role === "admin";
  const reload = () => loadUnits(box);
  const sections = (data.codes || []).map((c) => h("section", { class: "code-units", "data-code-units": c.code },
    h("h3", {}, c.title),
    c.units.map((u) => {
      const formBox = h("div", {});
      const cur = u.current;
      let now;
      if (cur) now = h("p", { "data-current": u.id }, h("b", {}, `${u.id}: ${brl(cur.value_brl)}`), ` vigente ${validity(cur)} — ${cur.act}`);
      else if (u.default_value_brl) now = h("p", { class: "banner", "data-current": u.id }, `${u.id}: sem valor cadastrado; as multas usam o valor padrão do arquivo do código (${brl(u.default_value_brl)}), sem vigência nem ato legal.`);
      else now = h("p", { class: "banner", "data-current": u.id }, `${u.id}: nenhum valor vigente hoje (${dateBR(data.today)}) — as multas saem sem valor em R$ até que um administrador o cadastre.`);
      return h("div", { class: "unit", "data-unit": `${c.code}/${u.id}` },
        h("p", { class: "muted" }, `${u.name}${u.article ? " (" + u.article + ")" : ""}${u.obsolete ? " — unidade extinta" : ""}${u.indexation ? "; " + u.indexation : ""}`),
        now,
        u.periods.length ? h("div", { class: "table-wrap" }, h("table", { "data-table": "periods" },
          h("thead", {}, h("tr", {}, ["vigência", "valor", "ato legal", "cadastrado por"].map((t) => h("th", {}, t)))),
          h("tbody", {}, u.periods.map((p) => h("tr", { "data-period": p.id, class: cur && cur.id === p.id ? "current" : "" },
            h("td", {}, validity(p)), h("td", { class: "num" }, brl(p.value_brl)), h("td", {}, p.act),
            h("td", {}, `${p.set_by}, ${fmtDT.format(new Date(p.set_at))}`)))))) : null,
        admin ? h("div", { class: "toolbar" }, h("button", { type: "button", class: "secondary", "data-new-value": `${c.code}/${u.id}`,
          onclick: () => { put(formBox, unitForm(c, u, (saved) => { put(formBox); if (saved) reload(); })); formBox.querySelector("input").focus(); } }, `Novo valor do ${u.id}`)) : null,
        formBox);
    })));
  put(box, admin ? null : h("p", { class: "muted", id: "units-readonly" }, "Somente administradores cadastram valores; aqui você consulta o valor vigente de cada unidade."), sections);
}

// loadReminders shows the calibration register's reminders (expired and
// expiring certificates) with a link to Metrologia; nothing when there are
// none or the server keeps no register.
async function loadReminders(box) {
  let data;
  try { data = await api("/api/v1/calibration", { feature: "O registro de calibração" }); } catch { return; }
  const lines = certificateReminders(data);
  if (!lines.length) return;
  put(box, h("div", { class: "banner", role: "status" }, lines.map((t) => h("div", {}, t)),
    h("div", {}, h("a", { href: "#/metrologia" }, "Ver a Metrologia"))));
}

// ---- the evidence signing key ---------------------------------------------
// keyState names a key of the history the way the perito reads it.
function keyState(k, current) {
  if (k.revoked) return "revogada" + (k.reason ? `: ${k.reason}` : "") + " — nada do que ela assinou é confiável";
  if (current) return "em vigor";
  return "substituída" + (k.reason ? `: ${k.reason}` : "") + " — o que ela assinou antes continua válido";
}

async function loadEvidenceKey(box) {
  let k;
  try {
    k = await api("/api/v1/evidence/key", { feature: "A chave das evidências" });
  } catch (e) {
    put(box, h("p", { class: "muted", id: "evidence-key-missing" }, e.message));
    return;
  }
  const hist = k.history || [];
  const when = (t) => t ? fmtDT.format(new Date(t)) : "—";
  put(box,
    h("p", {}, "Impressão digital (a mesma impressa nas notificações e autos e gravada em ", h("code", {}, "bag-info.txt"), " de cada pacote):"),
    h("p", {}, h("code", { class: "fingerprint", "data-evidence-fingerprint": k.fingerprint }, k.fingerprint_grouped)),
    h("p", {}, "Chave pública (", k.algorithm, ", base64): ", h("code", { "data-evidence-public-key": "" }, k.public_key), " · ",
      h("a", { href: "/api/v1/evidence/key?formato=pem", download: "chave-evidencias.pem" }, "baixar em PEM"), " · ",
      h("a", { href: "/api/v1/evidence/key" }, "JSON com o histórico"), " (endereços públicos, sem login)"),
    h("p", { class: "muted" }, "Um perito confere um pacote com esta chave: ",
      h("code", {}, `sossego evidence verify pacote.zip --impressao ${k.fingerprint}`), ", ou só com sha256sum e openssl, como diz o VERIFICAR.txt do pacote."),
    hist.length ? h("div", { class: "table-wrap" }, h("table", { "data-table": "evidence-keys" },
      h("thead", {}, h("tr", {}, ["Impressão digital", "Válida desde", "Válida até", "Situação"].map((x) => h("th", {}, x)))),
      h("tbody", {}, hist.map((e, i) => h("tr", { "data-key": e.fingerprint },
        h("td", {}, h("code", {}, e.fingerprint)), h("td", {}, when(e.valid_from)), h("td", {}, e.valid_until ? when(e.valid_until) : "—"),
        h("td", {}, keyState(e, i === hist.length - 1 && !e.valid_until))))))) : null);
}

function page(root) {
  const remindersBox = h("div", { id: "admin-reminders" });
  const usersBox = h("div", { id: "admin-users" });
  const unitsBox = h("div", { id: "admin-units" }, "carregando…");
  const keyBox = h("div", { id: "evidence-key" }, "carregando…");
  const admin = me().role === "admin";
  put(root, h("h1", {}, "Administração"), remindersBox,
    admin ? [h("h2", {}, "Usuários"), h("p", { class: "muted" }, "O nome completo e a matrícula do fiscal são os que a notificação, o auto, a trilha de auditoria e a evidência imprimem."), usersBox] : null,
    h("h2", { id: "units-heading" }, "Unidades monetárias"),
    h("p", { class: "muted" }, "Valor de cada unidade por vigência, com o ato legal que o fixou: a multa é calculada com o valor vigente na data do ato."),
    unitsBox,
    holidaysSection(),
    h("h2", { id: "evidence-key-heading" }, "Chave que assina os pacotes de evidências"),
    h("p", { class: "muted" }, "Troca de chave: ", h("code", {}, "sossego evidence key rotate"),
      " (a antiga fica no histórico; com ", h("code", {}, "--revogar"), ", o que ela assinou deixa de ser confiável); depois, reinicie o serviço."),
    keyBox);
  loadReminders(remindersBox);
  loadEvidenceKey(keyBox);
  if (admin) loadUsers(usersBox);
  loadUnits(unitsBox);
  return { live() {} };
}

export { page };
