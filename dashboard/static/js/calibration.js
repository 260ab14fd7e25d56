// Sossego dashboard: the "Metrologia" page (#/metrologia) — each meter's
// calibration certificate (history kept), the field checks with an acoustic
// calibrator and their drift, the meter the signed batches report, expiry
// reminders, and whether the readings are indicativas and why. Admins add
// revisions (with the certificate's PDF) and set each municipality's
// field-check policy. API: /api/v1/calibration/… (docs/metrology.md).
// app.js routes here (view), and each alert card shows the calibration
// verdict of its readings (alertNote).
import { TZ, api, fill as put, h, toast } from "./lib.js";
import { S, municipalityName } from "./state.js";

const me = () => S.me || {};
const fmtDT = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
const num = (v, d = 2) => (v === null || v === undefined) ? "—" : Number(v).toLocaleString("pt-BR", { minimumFractionDigits: d, maximumFractionDigits: d });
const signed = (v) => (v > 0 ? "+" : "") + num(v);
const date = (ymd) => { if (!ymd) return "—"; const [y, m, d] = ymd.split("-"); return `${d}/${m}/${y}`; };

const bare = (why) => (why || "").replace(/^leituras indicativas: /, "");
// The readings' standing is the decision the workflow applies (d, from
// calibration.Decide: the register of sensors' class, then the register's
// certificate or, with none, the register of sensors' calibration date);
// the register's own verdict (v, regWhy) follows when it says otherwise.
function situation(d, v, regWhy) {
  const state = d.ok ? h("span", { class: "cal-ok", "data-cal-state": "valida" }, "Válidas para constatação")
    : h("span", { class: "cal-bad", "data-cal-state": "indicativa" }, "Indicativas — ", bare(d.why));
  const why = d.ok && d.why ? h("div", { class: "muted" }, d.why) : null;
  const register = d.ok === v.ok ? null : h("div", { class: "muted", "data-cal-register": v.ok ? "valida" : "indicativa" },
    "Registro de calibrações: ", v.ok ? "certificado em vigor" : bare(regWhy));
  return [state, why, h("div", { class: "muted", "data-cal-source": d.source }, "decidido pelo ", d.source), register];
}
function expiryCell(v) {
  const c = v.certificate;
  if (!c) return h("td", { class: "cal-bad" }, "sem certificado");
  if (v.expired) return h("td", { class: "cal-bad", "data-cal-expiry": "expired" }, date(c.expires), " — vencido");
  if (v.expiring) return h("td", { class: "cal-warn", "data-cal-expiry": "expiring" }, date(c.expires),
    v.days_left === 0 ? " — vence hoje" : v.days_left === 1 ? " — vence amanhã" : ` — vence em ${v.days_left} dias`);
  return h("td", {}, date(c.expires));
}
function meterCell(v) {
  const c = v.certificate, d = v.device;
  const cert = c ? `${c.meter_model} nº ${c.meter_serial}` : "—";
  if (!d) return h("td", {}, cert, h("div", { class: "muted" }, "nenhum lote assinado recebido ainda"));
  if (v.mismatch) return h("td", { class: "cal-bad", "data-cal-mismatch": "" }, cert, h("div", {}, `⚠ lotes assinados informam ${d.model} nº ${d.serial}`));
  return h("td", {}, cert, h("div", { class: "muted" }, "confere com os lotes assinados"));
}
function checkCell(v, k) {
  if (!k) return h("td", { class: "cal-warn", "data-cal-check": "none" }, "nenhuma");
  const cls = v.check_stale || v.drift_high ? "cal-warn" : "";
  return h("td", { class: cls, "data-cal-check": v.check_stale ? "stale" : "ok" }, fmtDT.format(new Date(k.at)),
    h("div", {}, `${num(k.reference_db, 1)} dB → ${num(k.measured_db)} dB (desvio ${signed(k.drift_db)} dB)`),
    v.check_stale ? h("div", {}, `mais antiga que ${v.check_max_days} dias`) : null);
}

// certificateReminders: the expired and expiring certificates of the
// register's overview (GET /api/v1/calibration), one sentence each; shown
// on this page and on Administração.
export function certificateReminders(data) {
  const out = [];
  if (data.expired) out.push(`${data.expired} certificado(s) vencido(s): as leituras desses medidores são indicativas.`);
  if (data.expiring) out.push(`${data.expiring} certificado(s) vencem nos próximos ${data.expiring_within_days} dias: agende a calibração.`);
  return out;
}

async function view(root) {
  root.replaceChildren(h("h1", {}, "Metrologia"), h("p", { class: "muted" }, "carregando…"));
  let data;
  try { data = await api("/api/v1/calibration", { feature: "O registro de calibração" }); }
  catch (e) { root.replaceChildren(h("h1", {}, "Metrologia"), h("p", { class: "error" }, e.message)); return; }
  const rows = data.sensors || [];
  const reminders = certificateReminders(data);
  const detail = h("section", { id: "cal-detail", class: "cal-detail" });
  const table = h("table", { class: "cal-table", id: "cal-table" },
    h("thead", {}, h("tr", {}, ["Sensor", "Certificado", "Validade", "Incerteza", "Medidor", "Última verificação de campo", "Situação das leituras"].map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((r) => {
      const v = r.verdict, c = v.certificate;
      return h("tr", { "data-cal-sensor": r.sensor, class: r.decision.ok ? "" : "indicativa" },
        h("td", {}, h("a", { href: "#/metrologia/" + encodeURIComponent(r.sensor) }, h("b", {}, r.sensor)), h("div", { class: "muted" }, municipalityName(r.municipality))),
        h("td", {}, c ? [`nº ${c.number}`, h("div", { class: "muted" }, c.laboratory + ` (${date(c.calibrated_on)})`)] : "—"),
        expiryCell(v), h("td", {}, c ? `± ${num(c.uncertainty_db)} dB` : "—"), meterCell(v), checkCell(v, r.last_check),
        h("td", {}, situation(r.decision, v, r.why), (v.warnings || []).length ? h("ul", { class: "cal-warnings" }, v.warnings.map((w) => h("li", {}, w))) : null));
    })));
  put(root, h("h1", {}, "Metrologia"),
    h("p", { class: "muted" }, "Certificados de calibração de cada medidor, verificações de campo com calibrador acústico (94 ou 114 dB a 1 kHz) e o medidor que os lotes assinados informam. Leituras indicativas ainda geram alertas, mas não sustentam constatação nem notificação."),
    reminders.length ? h("div", { class: "banner", id: "cal-reminders", role: "status" }, reminders.map((t) => h("div", {}, t))) : null,
    h("div", { class: "table-wrap" }, table), me().role === "admin" ? policyForm(rows) : null, detail);
  const m = location.hash.match(/^#\/metrologia\/(.+)$/);
  if (m) sensorDetail(detail, decodeURIComponent(m[1]));
}

function policyForm(rows) {
  const munis = [...new Set(rows.map((r) => r.municipality).filter(Boolean))]
    .sort((a, b) => municipalityName(a).localeCompare(municipalityName(b), "pt-BR"));
  if (!munis.length) return null;
  const sel = h("select", { name: "municipality" }, munis.map((x) => h("option", { value: x }, municipalityName(x))));
  const days = h("input", { type: "number", name: "days", min: "0", max: "366", value: "30" });
  const out = h("span", { role: "status" });
  return h("form", { class: "toolbar cal-policy", id: "cal-policy", onsubmit: async (ev) => {
    ev.preventDefault();
    out.className = ""; out.textContent = "salvando…";
    try {
      await api("/api/v1/calibration/policy/" + encodeURIComponent(sel.value), { method: "PUT", body: { check_max_days: Number(days.value) || 0 } });
      out.textContent = "Política salva.";
      setTimeout(() => view(document.querySelector("#view")), 300);
    } catch (e) { out.className = "error"; out.textContent = e.message; }
  } }, h("b", {}, "Política de verificação de campo: "), h("label", {}, "município ", sel), h("label", {}, " a cada ", days, " dias"),
  h("button", { type: "submit" }, "Salvar"), out);
}

async function sensorDetail(el, id) {
  el.replaceChildren(h("p", { class: "muted" }, "carregando…"));
  let d;
  try { d = await api("/api/v1/calibration/sensors/" + encodeURIComponent(id)); }
  catch (e) { el.replaceChildren(h("p", { class: "error" }, e.message)); return; }
  const certs = (d.certificates || []).slice().reverse();
  put(el, h("h2", {}, "Sensor " + id), h("div", { id: "cal-situation" }, situation(d.decision, d.verdict, d.why)),
    h("h3", {}, "Certificados (histórico completo; nada é sobrescrito)"),
    certs.length ? h("div", { class: "table-wrap" }, h("table", { id: "cal-history" },
      h("thead", {}, h("tr", {}, ["Revisão", "Nº", "Laboratório", "Medidor", "Calibração", "Validade", "Incerteza", "Arquivo", "Registrado", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, certs.map((c) => h("tr", { "data-cal-revision": c.id },
        h("td", {}, String(c.id), c.replaces ? h("div", { class: "muted" }, "corrige " + c.replaces) : null), h("td", {}, c.number), h("td", {}, c.laboratory),
        h("td", {}, `${c.meter_model} nº ${c.meter_serial}`), h("td", {}, date(c.calibrated_on)), h("td", {}, date(c.expires)), h("td", {}, `± ${num(c.uncertainty_db)} dB`),
        h("td", {}, c.file_sha256 ? [h("a", { href: `/api/v1/calibration/certificates/${c.id}/file` }, c.file_name), h("div", { class: "muted mono", title: "sha256" }, c.file_sha256.slice(0, 16) + "…")] : "—"),
        h("td", {}, fmtDT.format(new Date(c.recorded_at)), h("div", { class: "muted" }, c.recorded_by)),
        h("td", {}, me().role === "admin" ? h("button", { type: "button", class: "secondary", onclick: () => form.fill(c) }, "Corrigir") : null)))))) :
      h("p", { class: "muted" }, "Nenhum certificado cadastrado."),
    h("h3", {}, "Verificações de campo"),
    (d.checks || []).length ? h("div", { class: "table-wrap" }, h("table", { id: "cal-checks" },
      h("thead", {}, h("tr", {}, ["Quando", "Referência", "Medido", "Desvio", "Calibrador", "Gateway (seq)", "Assinatura"].map((x) => h("th", {}, x)))),
      h("tbody", {}, d.checks.map((k) => h("tr", { class: Math.abs(k.drift_db) > 0.5 ? "cal-warn" : "" },
        h("td", {}, fmtDT.format(new Date(k.at))), h("td", {}, num(k.reference_db, 1) + " dB"), h("td", {}, num(k.measured_db) + " dB"),
        h("td", { "data-cal-drift": k.drift_db }, signed(k.drift_db) + " dB"), h("td", {}, `${k.calibrator_model} nº ${k.calibrator_serial}`),
        h("td", {}, `${k.gateway} (${k.seq})`), h("td", {}, k.verified ? "verificada" : "sem assinatura")))))) :
      h("p", { class: "muted" }, "Nenhuma verificação de campo recebida."),
    h("h3", {}, "Medidor informado nos lotes assinados"),
    (d.devices || []).length ? h("ul", {}, d.devices.map((s) => h("li", {}, `a partir de ${fmtDT.format(new Date(s.at))}: ${s.model} nº ${s.serial} (${s.gateway}, seq ${s.seq})`))) :
      h("p", { class: "muted" }, "Nenhum lote assinado recebido."));
  const form = me().role === "admin" ? certForm(id, () => view(document.querySelector("#view"))) : null;
  if (form) el.append(form.el);
}

// The admins' form for a new revision (or a correction of one).
function certForm(sensor, done) {
  const f = (name, label, attrs = {}) => h("label", {}, label, h("input", Object.assign({ name }, attrs)));
  const err = h("div", { class: "error", id: "cal-form-error", role: "alert", hidden: true });
  const title = h("h3", {}, "Novo certificado");
  let replaces = 0;
  // The browser's own file button speaks the browser's language; this one
  // speaks Portuguese and names the file chosen.
  const none = "nenhum arquivo escolhido";
  const fileName = h("span", { class: "muted", "data-file-name": "" }, none);
  const fileInput = h("input", { name: "file", type: "file", accept: "application/pdf", id: "cal-file", class: "file-native",
    onchange: () => { fileName.textContent = fileInput.files && fileInput.files[0] ? fileInput.files[0].name : none; } });
  const filePick = h("div", { class: "file-pick" }, h("span", {}, "Arquivo do certificado (PDF, opcional)"),
    h("span", { class: "file-row" }, h("label", { for: "cal-file", class: "button secondary" }, "Escolher arquivo…"), fileName), fileInput);
  const el = h("form", { class: "settings-form cal-form", id: "cal-form" }, title,
    f("number", "Número do certificado"), f("laboratory", "Laboratório"), f("meter_model", "Modelo do medidor"), f("meter_serial", "Número de série do medidor"),
    f("calibrated_on", "Data de calibração", { type: "date" }), f("expires", "Validade", { type: "date" }),
    f("uncertainty_db", "Incerteza expandida (dB)", { type: "number", step: "0.01", min: "0" }), f("note", "Observação"),
    filePick, err,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Registrar")));
  const E = el.elements;
  el.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    const body = { number: E.number.value, laboratory: E.laboratory.value, meter_model: E.meter_model.value, meter_serial: E.meter_serial.value,
      calibrated_on: E.calibrated_on.value, expires: E.expires.value, uncertainty_db: Number(E.uncertainty_db.value) || 0, note: E.note.value, replaces };
    const file = E.file.files && E.file.files[0];
    if (file) {
      const buf = new Uint8Array(await file.arrayBuffer());
      let bin = "";
      for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode.apply(null, buf.subarray(i, i + 0x8000));
      body.file_base64 = btoa(bin); body.file_name = file.name;
    }
    try {
      await api("/api/v1/calibration/sensors/" + encodeURIComponent(sensor) + "/certificates", { method: "POST", body });
      toast("Certificado registrado.");
      done();
    } catch (e) {
      err.hidden = false;
      err.replaceChildren(h("p", {}, "Não foi registrado:"), h("ul", {}, e.message.replace(/^corrija: /, "").split("; ").map((p) => h("li", {}, p))));
    }
  });
  return { el, fill(c) {
    replaces = c.id;
    title.textContent = `Corrigir a revisão ${c.id} (a original fica no histórico)`;
    for (const k of ["number", "laboratory", "meter_model", "meter_serial", "calibrated_on", "expires", "uncertainty_db", "note"]) E[k].value = c[k] ?? "";
    el.scrollIntoView({ block: "start" });
  } };
}

// On an alert card: whether its readings may found a constatação.
function alertNote(a) {
  const el = h("div", { class: "cal-note", "data-cal-alert": a.id, hidden: true });
  const at = a.firing_at || a.pending_at;
  if (!a.sensor || a.kind === "no_data") return el;
  api(`/api/v1/calibration/sensors/${encodeURIComponent(a.sensor)}/status` + (at ? "?at=" + encodeURIComponent(at) : ""))
    .then((s) => {
      if (s.ok) return;
      el.hidden = false;
      el.replaceChildren(h("b", {}, "Leituras indicativas"), " — não sustentam constatação nem notificação: ", s.why.replace(/^leituras indicativas: /, ""), " ",
        h("a", { href: "#/metrologia/" + encodeURIComponent(a.sensor) }, "ver metrologia"));
    }).catch(() => { /* no register on this server: nothing to say */ });
  return el;
}

export { view, alertNote };
