// Sossego dashboard — notifications (pt-BR): who is on duty, silences, this
// device's push, each alert's notification history, and the admins'
// settings (receivers, plantão, escalation, contacts, test message).
// API: /api/v1/notify/… (docs/notifications.md).
import { TZ, api, fill as put, h, toast } from "./lib.js";
import { S, municipalityName } from "./state.js";

const me = () => S.me || {};
const fmtDT = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit", hour12: false });
const fmtHM = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, weekday: "short", hour: "2-digit", minute: "2-digit", hour12: false });
const DAYS = [["mon", "seg"], ["tue", "ter"], ["wed", "qua"], ["thu", "qui"], ["fri", "sex"], ["sat", "sáb"], ["sun", "dom"]];
const KINDS = { queued: "agrupado", silenced: "silenciado", unsilenced: "silêncio encerrado", notified: "mensagem", suppressed: "não repetido",
  no_recipient: "sem destinatário", escalated: "escalonado", exhausted: "escalonamento esgotado", acked: "reconhecido", resolved: "encerrado",
  dropped: "não enviado", enqueued: "na fila", sent: "entregue", retry: "falhou (nova tentativa)", failed: "falhou", no_channel: "sem canal" };
const FINAL = { sent: "ok", failed: "bad", retry: "warn", no_recipient: "bad", no_channel: "bad", exhausted: "bad" };

function dutyText(d) {
  const who = d.users && d.users.length ? d.users.join(", ") : "ninguém" + (d.coordinator ? ` (chama a coordenação: ${d.coordinator})` : " — sem coordenação: os alertas ficam sem destinatário");
  let t = `${municipalityName(d.municipality)}: ${who}`;
  if (d.override) t += " — exceção" + (d.reason ? ` (${d.reason})` : "");
  if (d.until) t += `, até ${fmtHM.format(new Date(d.until))}`;
  if (d.next) t += `; depois ${d.next}`;
  return t;
}
async function loadDuty(el) {
  try {
    const data = await api("/api/v1/notify/on-duty", { feature: "O plantão" });
    const list = data.on_duty || [];
    el.replaceChildren(h("b", {}, "Plantão agora: "), ...(list.length ? list.map((d, i) => h("span", { "data-duty": d.municipality }, (i ? " · " : "") + dutyText(d))) : ["nenhum município com escala."]));
  } catch (e) { el.textContent = "Plantão: " + e.message; }
}
// The on-duty line of the Alertas view; refreshed every minute while shown.
function dutyLine() {
  const el = h("div", { class: "duty muted", id: "on-duty", role: "status" }, "Plantão: carregando…");
  loadDuty(el);
  const timer = setInterval(() => { if (!el.isConnected) clearInterval(timer); else loadDuty(el); }, 60000);
  // A link from a message (#/alertas/<id>) opens the alert.
  const m = location.hash.match(/^#\/alertas\/(.+)$/);
  if (m) setTimeout(() => {
    const id = decodeURIComponent(m[1]);
    const art = document.querySelector(`[data-alert="${CSS.escape(id)}"]`);
    if (art) { art.scrollIntoView({ block: "start" }); art.classList.add("new"); }
  }, 300);
  return el;
}

function historyList(hs) {
  if (!hs.length) return h("p", { class: "muted" }, "Nenhuma notificação registrada para este alerta.");
  return h("ul", { class: "notif-log" }, hs.map((e) => h("li", { class: FINAL[e.kind] || "", "data-kind": e.kind },
    h("span", { class: "muted" }, fmtDT.format(new Date(e.at)) + " "), h("b", {}, KINDS[e.kind] || e.kind), " — ", e.detail)));
}
// Per alert: its notification history and, for operadores and fiscais,
// a silence for the sensor.
function alertExtras(a) {
  const box = h("div", { class: "notif-extras" });
  const det = h("details", { "data-notif-history": a.id }, h("summary", {}, "Notificações enviadas"), h("p", { class: "muted" }, "carregando…"));
  // While open, the history follows the deliveries (an e-mail sent, a
  // retry, an escalation) instead of showing what was known when opened.
  const load = async () => {
    try {
      const data = await api(`/api/v1/alerts/${encodeURIComponent(a.id)}/notifications`, { feature: "O histórico de notificações" });
      det.replaceChildren(det.firstChild, historyList(data.history || []));
    } catch (e) { det.replaceChildren(det.firstChild, h("p", { class: "error" }, e.message)); }
  };
  let timer = null;
  det.addEventListener("toggle", () => {
    clearInterval(timer);
    timer = null;
    if (!det.open) return;
    load();
    timer = setInterval(() => {
      if (!det.isConnected || !det.open) { clearInterval(timer); timer = null; } else load();
    }, 5000);
  });
  box.append(det);
  if (me().role === "operador" || me().role === "fiscal") {
    const form = h("div", { hidden: true });
    box.append(h("button", { type: "button", class: "link", "data-notify": "silence", onclick: () => { form.hidden = !form.hidden; } }, "Silenciar este sensor"), form);
    form.append(silenceForm({ sensor: a.sensor }, () => { form.hidden = true; }));
  }
  return box;
}

function silenceForm(target, done) {
  const f = h("form", { class: "step-form", "data-form": "silence" });
  const what = target.sensor ? null : h("select", { name: "what" });
  if (what) {
    const sensors = [...S.sensors.values()];
    for (const s of sensors.sort((x, y) => x.id.localeCompare(y.id))) what.append(h("option", { value: "s:" + s.id }, "sensor " + s.id));
    const ests = new Set();
    for (const s of sensors) for (const e of s.establishments || []) ests.add(e.name);
    for (const e of [...ests].sort()) what.append(h("option", { value: "e:" + e }, "estabelecimento " + e));
  }
  const dur = h("select", { name: "minutes" }, [[60, "1 hora"], [120, "2 horas"], [240, "4 horas"], [480, "8 horas"], [720, "12 horas"], [1440, "24 horas"], [10080, "7 dias"]]
    .map(([v, l]) => h("option", { value: v }, l)));
  const reason = h("input", { name: "reason", required: true, placeholder: "ex.: evento licenciado nº 12/2026; alvará de obra" });
  const err = h("p", { class: "error", role: "alert", hidden: true });
  f.append(target.sensor ? h("p", {}, "Silenciar o sensor ", h("b", {}, target.sensor), ": os alertas continuam registrados e visíveis, só não são enviados.") : h("label", {}, "O quê", what),
    h("label", {}, "Por quanto tempo", dur), h("label", {}, "Motivo *", reason), err,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Silenciar"), h("button", { type: "button", class: "secondary", onclick: done }, "Fechar")));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { minutes: Number(dur.value), reason: reason.value.trim() };
    if (target.sensor) body.sensor = target.sensor;
    else if (what.value.startsWith("s:")) body.sensor = what.value.slice(2);
    else body.establishment = what.value.slice(2);
    try {
      const s = await api("/api/v1/notify/silences", { method: "POST", body, feature: "Os silêncios" });
      err.hidden = true;
      toast(`Silenciado até ${fmtDT.format(new Date(s.ends))}: ${s.sensor || s.establishment}.`);
      reason.value = "";
      done(s);
    } catch (e) { err.hidden = false; err.textContent = e.message; }
  });
  return f;
}

// ---- the Notificações page ---------------------------------------------
function page(root) {
  const duty = h("p", { id: "duty-list" }, "carregando…");
  const device = h("div", { id: "push-device" });
  const silences = h("div", { id: "silences" });
  const settings = h("div", { id: "notify-settings" });
  const canSilence = me().role === "operador" || me().role === "fiscal";
  const newSilence = h("div", { hidden: true });
  put(root, h("h1", {}, "Notificações"),
    h("h2", {}, "Plantão agora"), duty,
    h("h2", {}, "Este aparelho"), device,
    h("h2", {}, "Silêncios"),
    canSilence ? h("div", { class: "toolbar" }, h("button", { type: "button", class: "secondary", "data-notify": "new-silence", onclick: () => { newSilence.hidden = !newSilence.hidden; } }, "Novo silêncio")) : null,
    newSilence, silences,
    me().role === "admin" ? h("h2", {}, "Configuração") : null, me().role === "admin" ? settings : null);
  newSilence.append(silenceForm({}, () => { newSilence.hidden = true; loadSilences(); }));
  (async () => {
    try {
      const data = await api("/api/v1/notify/on-duty", { feature: "O plantão" });
      duty.replaceChildren(h("ul", {}, (data.on_duty || []).map((d) => h("li", { "data-duty": d.municipality }, dutyText(d)))));
    } catch (e) { duty.textContent = e.message; }
  })();
  loadDevice(device);
  async function loadSilences() {
    try {
      const data = await api("/api/v1/notify/silences", { feature: "Os silêncios" });
      const list = data.silences || [];
      put(silences, list.length ? h("div", { class: "table-wrap" }, h("table", { "data-silences": "" },
        h("thead", {}, h("tr", {}, h("th", {}, "O quê"), h("th", {}, "De"), h("th", {}, "Até"), h("th", {}, "Motivo"), h("th", {}, "Por"), h("th", {}, ""))),
        h("tbody", {}, list.map((s) => h("tr", { "data-silence": s.id },
          h("td", {}, s.sensor ? "sensor " + s.sensor : "estabelecimento " + s.establishment),
          h("td", {}, fmtDT.format(new Date(s.starts))),
          h("td", {}, fmtDT.format(new Date(s.ended_at || s.ends)) + (s.ended_by ? ` (encerrado por ${s.ended_by})` : s.active ? "" : " (expirado)")),
          h("td", {}, s.reason), h("td", {}, s.created_by),
          h("td", {}, s.active && canSilence ? h("button", { type: "button", class: "secondary", "data-notify": "end-silence", onclick: async () => {
            try { await api(`/api/v1/notify/silences/${encodeURIComponent(s.id)}/end`, { method: "POST" }); loadSilences(); } catch (e) { toast(e.message); }
          } }, "Encerrar") : null)))))) : h("p", { class: "muted" }, "Nenhum silêncio nos últimos 7 dias."),
      (data.audit || []).length ? h("details", {}, h("summary", {}, "Auditoria dos silêncios"), h("ul", {}, data.audit.map((a) =>
        h("li", {}, `${fmtDT.format(new Date(a.at))} — ${a.detail}${a.by ? " — " + a.by : ""}`)))) : null);
    } catch (e) { silences.textContent = e.message; }
  }
  loadSilences();
  if (me().role === "admin") loadSettings(settings);
  return {};
}

// ---- push on this device -------------------------------------------------
const b64 = (s) => { const p = "=".repeat((4 - s.length % 4) % 4); const raw = atob((s + p).replace(/-/g, "+").replace(/_/g, "/")); return Uint8Array.from(raw, (c) => c.charCodeAt(0)); };
async function loadDevice(el) {
  let info;
  try { info = await api("/api/v1/notify/push", { feature: "O push" }); } catch (e) { el.textContent = e.message; return; }
  const supported = "serviceWorker" in navigator && "PushManager" in window;
  const status = h("p", { class: "muted" }, `${info.devices} aparelho(s) seu(s) recebe(m) alertas por push.`);
  if (!info.enabled) { el.replaceChildren(status, h("p", { class: "muted" }, "O push não está ativado nas configurações.")); return; }
  if (!supported) { el.replaceChildren(status, h("p", { class: "muted" }, "Este navegador não oferece notificações push (no celular, instale o painel na tela inicial).")); return; }
  const btn = h("button", { type: "button", "data-notify": "push-subscribe", onclick: async () => {
    btn.disabled = true;
    try {
      const reg = await navigator.serviceWorker.register("/static/sw.js");
      if (await Notification.requestPermission() !== "granted") throw new Error("permissão de notificação negada neste navegador");
      const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64(info.public_key) });
      await api("/api/v1/notify/push/subscriptions", { method: "POST", body: sub.toJSON(), feature: "O push" });
      toast("Este aparelho vai receber os alertas por push.");
      loadDevice(el);
    } catch (e) { toast("Push não ativado: " + e.message); btn.disabled = false; }
  } }, "Receber alertas neste aparelho");
  el.replaceChildren(status, btn);
}

// ---- settings (admin) ----------------------------------------------------
const field = (label, input, hint) => h("label", {}, h("span", {}, label), input, hint ? h("small", { class: "muted" }, hint) : null);
const input = (name, value, attrs = {}) => { const i = h("input", Object.assign({ name, autocomplete: "off" }, attrs)); i.value = value ?? ""; return i; };
const check = (name, on) => { const i = h("input", { type: "checkbox", name }); i.checked = !!on; return i; };
const select = (name, value, opts) => { const s = h("select", { name }, opts.map(([v, l]) => h("option", { value: v }, l))); s.value = value ?? ""; return s; };

async function loadSettings(el) {
  let data;
  try { data = await api("/api/v1/notify/settings", { feature: "As configurações de notificação" }); } catch (e) { el.textContent = e.message; return; }
  renderSettings(el, data);
}

// muniBox: a municipality's plantão — coordinator, escalation, weekly
// shifts and exceptions by date (fiscais and everyone: [value, label]).
function muniBox(m, fiscais, everyone) {
  const shifts = h("tbody"), overs = h("tbody");
  const shiftRow = (s = { days: [], from: "", to: "", user: "" }) => shifts.append(h("tr", { "data-shift": "" },
    h("td", {}, DAYS.map(([d, l]) => h("label", { class: "day" }, check(d, s.days.includes(d)), l))),
    h("td", {}, input("from", s.from, { type: "time" })), h("td", {}, input("to", s.to === "24:00" ? "23:59" : s.to, { type: "time" })),
    h("td", {}, select("user", s.user, [["", "—"], ...fiscais])),
    h("td", {}, h("button", { type: "button", class: "link", onclick: (ev) => ev.target.closest("tr").remove() }, "remover"))));
  const overRow = (o = {}) => overs.append(h("tr", { "data-override": "" }, h("td", {}, input("date", o.date, { type: "date" })),
    h("td", {}, input("from", o.from, { type: "time" })), h("td", {}, input("to", o.to === "24:00" ? "" : o.to, { type: "time" })),
    h("td", {}, select("user", o.user, [["", "—"], ...fiscais])), h("td", {}, input("reason", o.reason)),
    h("td", {}, h("button", { type: "button", class: "link", onclick: (ev) => ev.target.closest("tr").remove() }, "remover"))));
  (m.weekly || []).forEach(shiftRow);
  (m.overrides || []).forEach(overRow);
  return h("fieldset", { class: "panel", "data-municipality": m.id }, h("legend", {}, "Município " + m.id),
    field("Coordenação (último passo do escalonamento)", select("coordinator", m.coordinator, [["", "—"], ...everyone])),
    field("Escalonar sem reconhecimento após (min)", input("escalate_after_min", m.escalate_after_min || 15, { type: "number", min: 1, max: 1440 })),
    field("Fuso horário", input("timezone", m.timezone || TZ)),
    h("h4", {}, "Escala semanal"), h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Dias", "De", "Até", "Fiscal", ""].map((x) => h("th", {}, x)))), shifts)),
    h("button", { type: "button", class: "secondary", onclick: () => shiftRow() }, "Adicionar turno"),
    h("h4", {}, "Exceções por data (substituem a escala)"), h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Data", "De", "Até", "Fiscal", "Motivo", ""].map((x) => h("th", {}, x)))), overs)),
    h("button", { type: "button", class: "secondary", onclick: () => overRow() }, "Adicionar exceção"));
}

// collectSettings: the PUT /api/v1/notify/settings body of the form (e the
// stored e-mail settings, the others the form's parts).
function collectSettings(form, { e, em, hooks, push, munis, contacts }) {
  const hm = (v) => (v === "23:59" ? "24:00" : v);
  return { public_url: form.elements.public_url.value.trim(),
    email: { enabled: em.enabled.checked, transport: em.transport.value, host: em.host.value.trim(), port: Number(em.port.value) || 0, security: em.security.value,
      username: em.username.value.trim(), password: em.password.value, from: em.from.value.trim(), dir: em.dir.value.trim(), ca_file: em.ca.value.trim(), timeout: e.timeout },
    webhooks: [...hooks.querySelectorAll("tr")].map((tr) => ({ name: tr.querySelector("[name=name]").value.trim(), url: tr.querySelector("[name=url]").value.trim(),
      secret: tr.querySelector("[name=secret]").value, municipalities: tr.querySelector("[name=municipalities]").value.split(",").map((x) => x.trim()).filter(Boolean) })),
    push: { enabled: push.enabled.checked, subject: push.subject.value.trim() },
    grouping: Object.fromEntries(["level", "no_data", "clock"].map((k) => { const tr = form.querySelector(`[data-grouping=${k}]`); return [k, { wait: tr.querySelector("[name=wait]").value.trim(), interval: tr.querySelector("[name=interval]").value.trim() }]; })),
    municipalities: [...munis.querySelectorAll("[data-municipality]")].map((fs) => ({ id: fs.dataset.municipality, coordinator: fs.querySelector("[name=coordinator]").value,
      escalate_after_min: Number(fs.querySelector("[name=escalate_after_min]").value) || 0, timezone: fs.querySelector("[name=timezone]").value.trim(),
      weekly: [...fs.querySelectorAll("[data-shift]")].map((tr) => ({ days: DAYS.map(([d]) => d).filter((d) => tr.querySelector(`[name=${d}]`).checked),
        from: tr.querySelector("[name=from]").value, to: hm(tr.querySelector("[name=to]").value), user: tr.querySelector("[name=user]").value })),
      overrides: [...fs.querySelectorAll("[data-override]")].map((tr) => ({ date: tr.querySelector("[name=date]").value, from: tr.querySelector("[name=from]").value,
        to: tr.querySelector("[name=to]").value, user: tr.querySelector("[name=user]").value, reason: tr.querySelector("[name=reason]").value.trim() })) }))
      .filter((m) => m.weekly.length || m.overrides.length || m.coordinator),
    contacts: [...contacts.querySelectorAll("tr")].map((tr) => ({ user: tr.dataset.contact, email: tr.querySelector("[name=email]").value.trim(), phone: tr.querySelector("[name=phone]").value.trim() }))
      .filter((c) => c.email || c.phone) };
}

function renderSettings(el, data) {
  const st = JSON.parse(JSON.stringify(data.settings));
  const users = data.users || [];
  const fiscais = users.filter((u) => u.role === "fiscal").map((u) => [u.name, u.name]);
  const everyone = users.map((u) => [u.name, `${u.name} (${u.role})`]);
  const ro = !!data.source;
  const err = h("div", { class: "error", role: "alert", hidden: true });
  const ok = h("p", { class: "muted", role: "status" });
  const form = h("form", { class: "settings-form", "data-form": "notify-settings", novalidate: true });
  // e-mail
  const e = st.email || {};
  const em = { enabled: check("email.enabled", e.enabled), transport: select("email.transport", e.transport || "smtp", [["smtp", "SMTP"], ["dir", "pasta (.eml)"]]),
    host: input("email.host", e.host), port: input("email.port", e.port || "", { type: "number", min: 1, max: 65535 }),
    security: select("email.security", e.security || "starttls", [["starttls", "STARTTLS"], ["tls", "TLS (porta 465)"], ["none", "nenhuma (relay local)"]]),
    username: input("email.username", e.username), password: input("email.password", "", { type: "password", placeholder: e.password_set ? "(guardada; deixe vazio para manter)" : "" }),
    from: input("email.from", e.from), dir: input("email.dir", e.dir), ca: input("email.ca_file", e.ca_file) };
  // webhooks
  const hooks = h("tbody");
  const hookRow = (w = {}) => hooks.append(h("tr", { "data-webhook": "" }, h("td", {}, input("name", w.name, { placeholder: "zap" })), h("td", {}, input("url", w.url, { placeholder: "https://…" })),
    h("td", {}, input("secret", "", { type: "password", placeholder: w.secret_set ? "(guardada)" : "mín. 16 caracteres" })),
    h("td", {}, input("municipalities", (w.municipalities || []).join(", "), { placeholder: "todos" })),
    h("td", {}, h("button", { type: "button", class: "link", onclick: (ev) => ev.target.closest("tr").remove() }, "remover"))));
  (st.webhooks || []).forEach(hookRow);
  const push = { enabled: check("push.enabled", st.push && st.push.enabled), subject: input("push.subject", st.push && st.push.subject, { placeholder: "mailto:ti@prefeitura.gov.br" }) };
  // municipalities
  const munis = h("div");
  const knownMunis = new Set((st.municipalities || []).map((m) => m.id));
  for (const s of S.sensors.values()) if (s.municipality && !knownMunis.has(s.municipality)) { knownMunis.add(s.municipality); (st.municipalities = st.municipalities || []).push({ id: s.municipality, weekly: [] }); }
  (st.municipalities || []).sort((a, b) => a.id.localeCompare(b.id)).forEach((m) => munis.append(muniBox(m, fiscais, everyone)));
  // contacts
  const contacts = h("tbody");
  const contactOf = (u) => (st.contacts || []).find((c) => c.user === u) || {};
  for (const u of users) contacts.append(h("tr", { "data-contact": u.name }, h("td", {}, `${u.name} (${u.role})`),
    h("td", {}, input("email", contactOf(u.name).email, { type: "email", placeholder: "nome@prefeitura.gov.br" })),
    h("td", {}, input("phone", contactOf(u.name).phone, { placeholder: "+5541999990000" }))));
  const g = st.grouping || {};
  const grp = (k, l) => h("tr", { "data-grouping": k }, h("td", {}, l), h("td", {}, input("wait", (g[k] || {}).wait || "0s")), h("td", {}, input("interval", (g[k] || {}).interval || "2m0s")));
  const testUser = select("test-user", me().user, everyone);
  const testRecv = select("test-receiver", "email", [["email", "e-mail"], ["push", "push"], ...(st.webhooks || []).map((w) => ["webhook:" + w.name, "webhook " + w.name])]);
  put(form,
    ro ? h("p", { class: "banner" }, `As configurações vêm do arquivo ${data.source}: edite o arquivo (recarregado sozinho). Aqui só se lê.`) : null,
    field("Endereço público do painel (links nas mensagens)", input("public_url", st.public_url, { placeholder: "https://ruido.prefeitura.gov.br" })),
    h("fieldset", { class: "panel" }, h("legend", {}, "E-mail"), h("label", { class: "day" }, em.enabled, " enviar alertas por e-mail"),
      field("Transporte", em.transport), field("Servidor SMTP", em.host), field("Porta", em.port), field("Segurança", em.security),
      field("Usuário", em.username), field("Senha", em.password, "nunca é mostrada"), field("Remetente", em.from),
      field("Pasta (transporte .eml)", em.dir), field("Certificados da CA (arquivo PEM no servidor, opcional)", em.ca)),
    h("fieldset", { class: "panel" }, h("legend", {}, "Webhooks (WhatsApp, SMS, Telegram, 156 da Prefeitura)"),
      h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Nome", "Endereço", "Chave HMAC", "Municípios", ""].map((x) => h("th", {}, x)))), hooks)),
      h("button", { type: "button", class: "secondary", onclick: () => hookRow() }, "Adicionar webhook")),
    h("fieldset", { class: "panel" }, h("legend", {}, "Push (navegador e celular)"), h("label", { class: "day" }, push.enabled, " enviar alertas por push"),
      field("Contato VAPID", push.subject)),
    h("fieldset", { class: "panel" }, h("legend", {}, "Agrupamento"), h("div", { class: "table-wrap" }, h("table", {},
      h("thead", {}, h("tr", {}, ["Tipo", "Espera inicial", "Intervalo entre mensagens"].map((x) => h("th", {}, x)))),
      h("tbody", {}, grp("level", "nível acima do limite"), grp("no_data", "sem dados"), grp("clock", "relógio não sincronizado"))))),
    h("h3", {}, "Plantão e escalonamento"), munis,
    h("h3", {}, "Contatos"), h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, h("tr", {}, ["Usuário", "E-mail", "Telefone (webhooks)"].map((x) => h("th", {}, x)))), contacts)),
    err, ok,
    h("div", { class: "actions toolbar" }, ro ? null : h("button", { type: "submit", "data-notify": "save-settings" }, "Salvar"),
      h("span", {}, "Teste: ", testRecv, " para ", testUser, " ", h("button", { type: "button", class: "secondary", "data-notify": "test", onclick: async () => {
        ok.textContent = "enviando…";
        try { const r = await api("/api/v1/notify/test", { method: "POST", body: { receiver: testRecv.value, user: testUser.value } }); ok.textContent = r.mensagem; }
        catch (e2) { ok.textContent = ""; showErr(e2.message); }
      } }, "Enviar teste"))));
  function showErr(msg) {
    err.hidden = false;
    const parts = msg.replace(/^corrija: /, "").split("; ");
    err.replaceChildren(h("p", {}, "Não foi salvo:"), h("ul", {}, parts.map((p) => h("li", {}, p))));
  }
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const out = collectSettings(form, { e, em, hooks, push, munis, contacts });
    err.hidden = true; ok.textContent = "salvando…";
    try {
      const saved = await api("/api/v1/notify/settings", { method: "PUT", body: out });
      renderSettings(el, saved);
      toast("Configurações de notificação salvas.");
    } catch (e2) { ok.textContent = ""; showErr(e2.message); }
  });
  if (ro) form.querySelectorAll("input, select").forEach((i) => { if (!i.name.startsWith("test-")) i.disabled = true; });
  el.replaceChildren(form);
}

export { dutyLine, alertExtras, page };
