// The alert's document in its card: a fresh draft or a stored act
// (notice, relatório, auto, correction) with its fields, constatações,
// people, deadlines and edits, and the fiscal's workflow steps as forms
// (docs/workflow-api.md).
import { $, api, download, fill, fmtDate, fmtDateTime, fmtHM, h } from "./lib.js";
import { S } from "./state.js";
import { stepForm } from "./forms.js";

export const STEP_LABELS = { issue: "Emitir", ciente: "Registrar ciente", recusa: "Registrar recusa", regularize: "Registrar regularização",
  edit: "Editar minuta", constatacao: "Registrar constatação",
  auto: "Lavrar auto de infração", cancel: "Descartar minuta", decide: "Registrar julgamento" };
const STEP_DONE = { issue: "Documento emitido.", ciente: "Ciente registrado.", recusa: "Recusa registrada com as testemunhas.",
  regularize: "Regularização registrada.", auto: "Auto de infração lavrado.", cancel: "Minuta descartada.", decide: "Julgamento registrado.",
  constatacao: "Constatação registrada." };
const DEADLINE_STATUS = { waiting: "aguardando início", running: "correndo", expired: "vencido", done: "encerrado", not_allowed: "não cabe" };
const MEASUREMENTS = { sensor_window: "janela do sensor", on_site: "medição no local", statement: "declaração do fiscal com evidência" };
const EDIT_LABELS = { "party.name": "notificado (nome)", "party.document": "notificado (CNPJ/CPF)", "party.address": "notificado (endereço)",
  lavratura_place: "local da lavratura", circumstances: "circunstâncias", prazo_days: "prazo (dias)" };
// Fields a workflow step fills (not edited in the draft).
const STEP_FIELDS = new Set(["agente", "autoridade", "autuante", "ciente", "testemunhas", "recusa", "assinaturas", "lavratura"]);
// A decimal typed with a comma or a point; "" is null.
const decimal = (v) => { const t = String(v || "").trim().replace(",", "."); return t === "" ? null : Number(t); };
// datetime-local value in Brasília time (no daylight saving since 2019) from an instant.
const localValue = (iso) => { const d = new Date(new Date(iso || Date.now()).getTime() - 3 * 3600e3); return d.toISOString().slice(0, 16); };
const witnessText = (w) => w.doc_type === "rg" ? `${w.name} (RG ${w.document} ${w.issuer || ""})` : w.doc_type === "cpf" ? `${w.name} (CPF ${w.document})` : `${w.name} (${w.document})`;
const isNoticeKind = (k) => k === "notificacao_preliminar" || k === "intimacao_preliminar" || k === "notificacao_intimacao";
export const alertPath = (id) => "/api/v1/alerts/" + encodeURIComponent(id);
const docPath = (id) => "/api/v1/notices/" + encodeURIComponent(id);

// ---- the constatação -------------------------------------------------------

function constatacaoFields(v, d, followsUp) {
  const ests = v.establishments || [];
  const onSite = (name, label, more = {}) => ({ name, label, when: "kind=on_site", ...more });
  return [
    followsUp ? { type: "heading", label: `Constatação após o prazo de ${followsUp}: uma nova medição no local, ou a declaração do fiscal com a sua evidência.` } : null,
    { type: "heading", label: "Fonte do ruído" },
    { name: "source", label: "Quem produziu o ruído", type: "select", options: [
      ...(ests.length ? [{ value: "establishment", label: "estabelecimento do cadastro" }] : []),
      { value: "other", label: "outra pessoa ou empresa" }, { value: "unidentified", label: "fonte não identificada" }] },
    ests.length ? { name: "establishment_id", label: "Estabelecimento", type: "select", when: "source=establishment", options: ests.map((e) => ({ value: e.id, label: `${e.name} — ${e.document}` })) } : null,
    { name: "other_name", label: "Nome ou razão social", when: "source=other", required: true },
    { name: "other_document", label: "CNPJ ou CPF", when: "source=other", required: true, hint: "os dígitos verificadores são conferidos" },
    { name: "other_address", label: "Endereço", when: "source=other", required: true },
    { type: "heading", label: "Onde o fiscal estava e quando" },
    { name: "position_address", label: "Endereço do ponto de constatação", required: true, value: (d.site && d.site.address) || "" },
    { name: "position_description", label: "Descrição do ponto", placeholder: "calçada oposta, em frente ao nº 120" },
    { name: "lat", label: "Latitude (opcional)", placeholder: "-25,76971" }, { name: "lon", label: "Longitude (opcional)", placeholder: "-49,71582" },
    { name: "at", label: "Data e hora (horário de Brasília)", type: "datetime-local", required: true, value: localValue(v.now) },
    { name: "heard", label: "O que foi ouvido", type: "textarea", required: true, placeholder: "tipo de som, intensidade percebida, duração" },
    { type: "heading", label: "Medição que confirma" },
    { name: "kind", label: "Medição", type: "select", options: [
      ...(followsUp ? [] : [{ value: "sensor_window", label: "janela do sensor (medidor classe 1 ou 2 calibrado)" }]),
      { value: "on_site", label: "medição no local com medidor classe 1 ou 2" },
      ...(followsUp ? [{ value: "statement", label: "declaração do fiscal com evidência" }] : [])] },
    followsUp ? null : { name: "attested", label: "O fiscal atesta que o som medido pelo sensor vinha desta fonte", type: "select", when: "kind=sensor_window",
      options: [{ value: "no", label: "não atesto" }, { value: "yes", label: "sim, atesto a fonte" }] },
    onSite("meter_grade", "Classe do medidor", { type: "select", options: [{ value: "class1", label: "classe 1" }, { value: "class2", label: "classe 2" }] }),
    onSite("meter_model", "Modelo do medidor", { required: true }),
    onSite("meter_serial", "Número de série", { required: true }),
    onSite("meter_calibrated_at", "Data da calibração", { type: "date", required: true }),
    onSite("meter_certificate", "Certificado de calibração"),
    onSite("laeq", "LAeq medido, dB(A)", { required: true, placeholder: "67,5" }),
    onSite("duration_min", "Duração da medição (minutos)", { required: true, placeholder: "5" }),
    onSite("residual", "Nível residual, dB(A) (se medido)"),
    { name: "evidence", label: "Evidência da declaração", type: "textarea", when: "kind=statement", required: true, placeholder: "fotos, vídeo, reclamações registradas" },
  ].filter(Boolean);
}

// constatacaoBody: the POST …/constatacoes body of the form's values.
function constatacaoBody(x, followsUp) {
  const body = { follows_up: followsUp || undefined, heard: x.heard, at: x.at + ":00-03:00",
    source: { kind: x.source }, position: { address: x.position_address, description: x.position_description || undefined },
    measurement: { kind: x.kind } };
  if (x.source === "establishment") body.source.establishment_id = x.establishment_id;
  if (x.source === "other") Object.assign(body.source, { name: x.other_name, document: x.other_document, address: x.other_address });
  if (x.lat || x.lon) { body.position.lat = decimal(x.lat); body.position.lon = decimal(x.lon); }
  if (x.kind === "sensor_window") body.measurement.source_attested = x.attested === "yes";
  if (x.kind === "on_site") Object.assign(body.measurement, { meter: { grade: x.meter_grade, model: x.meter_model, serial: x.meter_serial,
    calibrated_at: x.meter_calibrated_at, certificate: x.meter_certificate || undefined }, laeq_db: decimal(x.laeq),
    duration_s: Math.round((decimal(x.duration_min) || 0) * 60), residual_db: decimal(x.residual) === null ? undefined : decimal(x.residual) });
  if (x.kind === "statement") body.measurement.evidence = x.evidence;
  return body;
}

// The constatação: source, where the fiscal stood, when, what was heard,
// and the measurement that confirms it.
function constatacaoForm(alertId, v, d, followsUp, done, onCancel) {
  return stepForm("constatacao", constatacaoFields(v, d, followsUp), "Registrar constatação", async (x) => {
    const k = await api(`${alertPath(alertId)}/constatacoes`, { method: "POST", body: constatacaoBody(x, followsUp), feature: "Registrar constatação" });
    await done(k);
  }, onCancel);
}

// ---- the draft's edits -----------------------------------------------------

// The draft's editable fields, with the automatic text as the start.
function editForm(v, d, onSave, onCancel) {
  const p = d.party || {};
  const base = [
    { name: "party.name", label: EDIT_LABELS["party.name"], value: p.name },
    { name: "party.document", label: EDIT_LABELS["party.document"], value: p.document },
    { name: "party.address", label: EDIT_LABELS["party.address"], value: p.address },
    { name: "lavratura_place", label: EDIT_LABELS.lavratura_place, value: d.lavratura_place || p.address },
    { name: "circumstances", label: EDIT_LABELS.circumstances, type: "textarea", value: d.circumstances || "", hint: "impressas com o relato do fato" },
    ...(isNoticeKind(d.kind) ? [{ name: "prazo_days", label: EDIT_LABELS.prazo_days, type: "number", min: 1, max: d.prazo_days_max || null, value: v.prazo_days || null }] : []),
  ];
  const own = (d.fields || []).filter((f) => !STEP_FIELDS.has(f.id) && !(f.id === "prazo" && isNoticeKind(d.kind)))
    .map((f) => ({ name: "field." + f.id, label: `${f.label} (${f.article})`, type: "textarea", rows: 4, value: f.pending ? "" : f.value }));
  const all = [...base, { type: "heading", label: "Campos do documento (o texto automático é o ponto de partida)" }, ...own];
  const start = {};
  for (const x of all) if (x.name) start[x.name] = x.value === null || x.value === undefined ? "" : String(x.value);
  return stepForm("edit", all, "Salvar alterações", async (x) => {
    const changes = [];
    for (const [k, val] of Object.entries(x)) if (String(val) !== start[k].trim() && !(k === "prazo_days" && val === 0 && !start[k])) changes.push({ field: k, value: String(val) });
    if (!changes.length) throw new Error("Nenhuma alteração feita.");
    await onSave(changes);
  }, onCancel);
}

// ---- the steps' forms ------------------------------------------------------

// The signing fiscal is the logged-in user (name and matrícula from the user register).
const SIGNER = { type: "heading", label: "Assina o fiscal logado, com o nome completo e a matrícula do cadastro de usuários." };

function issueForm(c) {
  const { v, d } = c;
  const prazoField = (d.fields || []).find((f) => f.id === "prazo");
  const needsPrazo = isNoticeKind(d.kind) && ((prazoField && prazoField.by_hand) || d.prazo_days_max > 0);
  return stepForm("issue", [SIGNER,
    ...(needsPrazo ? [{ name: "prazo_days", label: "Prazo para regularização (dias)", type: "number", required: !!(prazoField && prazoField.by_hand), min: 1, max: d.prazo_days_max || null, value: v.prazo_days || null,
      hint: (prazoField ? prazoField.article + ": " + prazoField.label : "") + (d.prazo_days_max ? ` — no máximo ${d.prazo_days_max} dias` : "") }] : [])],
  "Emitir " + (d.title || "documento"), async (x) => {
    const body = {};
    if (needsPrazo) body.prazo_days = x.prazo_days;
    c.after(await c.step("issue", body), STEP_DONE.issue);
  }, c.close);
}

function recusaForm(c) {
  const { d } = c;
  const n = Math.max(2, d.witnesses_on_refusal || 0);
  const fs = [];
  for (let i = 1; i <= n; i++) {
    const req = i <= (d.witnesses_on_refusal || 0);
    fs.push({ type: "heading", label: `${i}ª testemunha` },
      { name: `w${i}_name`, label: "Nome completo", required: req },
      { name: `w${i}_type`, label: "Documento", type: "select", options: [{ value: "cpf", label: "CPF" }, { value: "rg", label: "RG" }] },
      { name: `w${i}_doc`, label: "Número do documento", required: req, hint: "CPF: os dígitos verificadores são conferidos" },
      { name: `w${i}_issuer`, label: "Órgão emissor do RG", when: `w${i}_type=rg`, placeholder: "SSP/PR" });
  }
  fs.push({ name: "declaration", label: "Declaração do fiscal sobre a recusa (impressa no documento)", type: "textarea", required: true },
    { name: "observation", label: "Observação", type: "textarea" });
  return stepForm("recusa", fs, "Registrar recusa", async (x) => {
    const witnesses = [];
    for (let i = 1; i <= n; i++) if (x[`w${i}_name`] || x[`w${i}_doc`]) witnesses.push({ name: x[`w${i}_name`], doc_type: x[`w${i}_type`], document: x[`w${i}_doc`], issuer: x[`w${i}_type`] === "rg" ? x[`w${i}_issuer`] : undefined });
    const body = { witnesses, declaration: x.declaration };
    if (x.observation) body.observation = x.observation;
    c.after(await c.step("recusa", body), STEP_DONE.recusa);
  }, c.close);
}

// The auto: on a draft, for imminent risk; after a relatório, citing it;
// after a notice, citing the constatação made after its prazo.
function autoForm(c) {
  const { v, d } = c;
  const lavrar = async (body) => { const out = await c.step("auto", body); c.after(out, `Auto de infração ${out.auto ? out.auto.id : ""} lavrado.`); };
  if (v.state === "draft") {
    return stepForm("auto", [{ type: "heading", label: `Risco iminente (${d.not_when || ""}): o auto é lavrado sem ${d.title || "notificação"}.` }, SIGNER], "Lavrar auto de infração",
      () => lavrar({ imminent_risk: true }), c.close);
  }
  if (!isNoticeKind(d.kind)) {
    return stepForm("auto", [{ type: "heading", label: "Lavrar o auto de infração com referência a este documento." }], "Lavrar auto de infração",
      () => lavrar({}), c.close);
  }
  const followUps = (v.alert_constatacoes || []).filter((k) => k.follows_up && k.follows_up === v.id);
  return stepForm("auto", [{ type: "heading", label: "O auto cita a constatação feita depois do prazo que mostra que a infração continuou." },
    followUps.length ? { name: "follow_up", label: "Constatação após o prazo", type: "select", options: followUps.map((k) => ({ value: k.id, label: `${k.id} — ${fmtDateTime.format(new Date(k.at))}, ${MEASUREMENTS[k.measurement.kind] || ""}` })), value: followUps[followUps.length - 1].id }
      : { type: "heading", label: "Nenhuma constatação após o prazo registrada: use “Registrar constatação após o prazo”." }], "Lavrar auto de infração",
  (x) => lavrar(x.follow_up ? { follow_up: x.follow_up } : {}), c.close);
}

// stepForms: a builder per step of the document in c.
function stepForms(c) {
  const { v, d, id } = c;
  const simple = (k, fields, label, body) => () => stepForm(k, fields, label, async (x) => c.after(await c.step(k, body(x)), STEP_DONE[k]), c.close);
  const note = (x) => x.note ? { note: x.note } : {};
  return {
    issue: () => issueForm(c),
    ciente: simple("ciente", [{ name: "signed_by", label: "Nome de quem apôs o ciente", required: true },
      { name: "declaration", label: "Declaração do fiscal (impressa no documento)", type: "textarea" },
      { name: "observation", label: "Observação", type: "textarea" }], "Registrar ciente",
    (x) => ({ signed_by: x.signed_by, declaration: x.declaration || undefined, observation: x.observation || undefined })),
    recusa: () => recusaForm(c),
    regularize: simple("regularize", [{ name: "note", label: "Como a situação foi regularizada", type: "textarea" }], "Registrar regularização", note),
    auto: () => autoForm(c),
    edit: () => editForm(v, d, async (changes) => {
      const out = await api(docPath(id), { method: "PATCH", body: { changes }, feature: "Editar a minuta" });
      c.after(out, changes.length ? `Minuta alterada (${changes.length} ${changes.length === 1 ? "campo" : "campos"}).` : "Nada a alterar.");
    }, c.close),
    correct: () => stepForm("correct", [{ type: "heading", label: `O ato emitido não se altera: a correção é um novo ato que cita ${v.id}.` },
      { name: "reason", label: "Motivo da correção (impresso no novo ato)", type: "textarea", required: true }], "Lavrar ato de correção", async (x) => {
      const out = await c.post(`${docPath(id)}/correct`, { reason: x.reason }, "Corrigir o ato");
      c.show(out.correction, `Minuta de correção ${out.correction.id} criada: revise e emita.`);
    }, c.close),
    constatacao: () => constatacaoForm(c.alertId, v, d, v.stored && isNoticeKind(d.kind) && v.state !== "draft" ? v.id : "", async () => {
      if (v.stored) await c.panel.openDoc(c.alertId, v.id); else await c.panel.openAlertDoc(c.alertId);
      c.sayAfter(STEP_DONE.constatacao);
    }, c.close),
    cancel: simple("cancel", [{ name: "note", label: "Motivo do descarte", type: "textarea" }], "Descartar minuta", note),
    decide: simple("decide", [{ name: "punished", label: "Decisão", type: "select", options: [{ value: "true", label: "penalidade confirmada (autuado e punido)" }, { value: "false", label: "auto julgado improcedente" }] },
      { name: "note", label: "Fundamentação", type: "textarea" }], "Registrar julgamento",
    (x) => ({ punished: x.punished === "true", note: x.note || undefined })),
  };
}

// ---- the document's buttons -----------------------------------------------

// followUpState: whether the constatação after a notice's prazo can be
// recorded now — only once the prazo has run out (the server's clock and
// the document's prazo_end), as the server accepts it.
export function followUpState(v) {
  const end = v.prazo_end ? Date.parse(v.prazo_end) : NaN;
  if (!Number.isFinite(end)) return { open: false, at: null };
  const now = v.now ? Date.parse(v.now) : Date.now();
  return { open: now >= end, at: new Date(end) };
}

// followsUpNotice: a notice after its ciente or recusa, whose prazo the
// constatação after it checks.
const followsUpNotice = (v, d) => v.stored && isNoticeKind(d.kind) && ["acknowledged", "refused"].includes(v.state);

// constatacaoButton: "Registrar constatação" before any notice; after a
// notice's ciente or recusa, "Registrar constatação após o prazo" once the
// prazo expired (followUpNote says when before).
function constatacaoButton(c, open) {
  const { v, d } = c;
  const button = (text) => h("button", { type: "button", class: v.grounded ? "secondary" : "", "data-step": "constatacao", onclick: () => open("constatacao") }, text);
  if (!v.stored) return button("Registrar constatação");
  if (followsUpNotice(v, d) && followUpState(v).open) return button("Registrar constatação após o prazo");
  return null;
}

// followUpNote: while the prazo runs, from when the constatação after it
// can be recorded.
function followUpNote(c) {
  const { v, d } = c;
  if (!c.fiscal || !followsUpNotice(v, d)) return null;
  const f = followUpState(v);
  if (f.open || !f.at) return null;
  return h("p", { class: "muted", "data-followup-at": f.at.toISOString() }, `Registrar constatação após o prazo: disponível após ${fmtDate.format(f.at)} ${fmtHM.format(f.at)}`);
}

function docButtons(c, forms, open) {
  const { v, d, id, alertId, fiscal } = c;
  const buttons = [];
  const openOther = (other) => h("button", { type: "button", class: "secondary", "data-open-doc": other, onclick: () => c.act(() => c.panel.openDoc(alertId, other), "") }, "Abrir " + other);
  if (fiscal) buttons.push(constatacaoButton(c, open));
  if (fiscal && v.stored && v.state === "draft") buttons.push(h("button", { type: "button", class: "secondary", "data-step": "edit", onclick: () => open("edit") }, STEP_LABELS.edit));
  if (fiscal && !v.stored && v.grounded) {
    buttons.push(h("button", { type: "button", "data-step": "store", onclick: () => c.act(async () => {
      const out = await c.post(`${alertPath(alertId)}/notice`, undefined, "Salvar a minuta");
      c.after(out, `Minuta salva como ${out.id}.`);
    }, "") }, "Salvar minuta"));
  }
  if (fiscal && v.stored) {
    for (const k of v.actions || []) {
      if (!forms[k]) continue;
      buttons.push(h("button", { type: "button", class: k === "cancel" ? "secondary" : "", "data-step": k, onclick: () => open(k) }, STEP_LABELS[k]));
    }
  }
  if (fiscal && v.stored && !["draft", "cancelled"].includes(v.state) && !v.corrected_by) buttons.push(h("button", { type: "button", class: "secondary", "data-step": "correct", onclick: () => open("correct") }, "Corrigir ato"));
  for (const other of [v.corrected_by, d.corrects && d.corrects.id].filter(Boolean)) buttons.push(openOther(other));
  if (v.stored) buttons.push(h("button", { type: "button", class: "secondary", "data-step": "pdf", onclick: () => c.act(() => download(`${docPath(id)}/pdf`, `${id}.pdf`, "O PDF do documento"), "PDF baixado.") }, "Baixar PDF"));
  for (const kid of v.children || []) buttons.push(openOther(kid));
  if (d.refers_to && d.refers_to.id) buttons.push(openOther(d.refers_to.id));
  return buttons.filter(Boolean);
}

// ---- the document's text ---------------------------------------------------

function constatacoesList(ks) {
  if (!ks.length) return null;
  return h("div", { class: "constatacoes", "data-constatacoes": "" }, h("h4", {}, "Constatações"),
    h("ul", {}, ks.map((k) => h("li", { "data-constatacao": k.id, class: k.grounds ? "" : "muted" },
      h("b", {}, k.id), ` — ${fmtDateTime.format(new Date(k.at))}, ${MEASUREMENTS[k.measurement.kind] || k.measurement.kind}`,
      k.follows_up ? ` (após o prazo de ${k.follows_up})` : "",
      k.source.kind === "unidentified" ? ", fonte não identificada" : `, fonte: ${k.source.name || ""}`,
      h("div", { class: k.grounds ? "ok" : "error" }, k.grounds ? "sustenta o documento" : "não sustenta: " + k.why)))));
}

function peopleList(v) {
  const people = [];
  const at = (t) => t ? " em " + fmtDateTime.format(new Date(t)) : "";
  if (v.agent) people.push(`Agente fiscal: ${v.agent.name}, matrícula ${v.agent.matricula}`);
  if (v.issued_at) people.push("Emitido em " + fmtDateTime.format(new Date(v.issued_at)));
  if (v.signed_by) people.push(`Ciente de ${v.signed_by}` + at(v.ciencia_at));
  if (v.witnesses && v.witnesses.length) people.push(`Recusa${at(v.ciencia_at)}; testemunhas: ` + v.witnesses.map(witnessText).join("; "));
  if (v.declaration) people.push("Declaração do fiscal: " + v.declaration);
  if (v.observation) people.push("Observação: " + v.observation);
  if (v.pdf) people.push(`PDF armazenado (${v.pdf.stage === "issue" ? "como emitido" : "com a " + v.pdf.stage}): SHA-256 ${v.pdf.sha256.slice(0, 16)}…`);
  if (v.escalated_to) people.push("Auto de infração: " + v.escalated_to);
  return people.length ? h("ul", { class: "people" }, people.map((p) => h("li", {}, p))) : null;
}

function deadlinesTable(dls) {
  if (!dls.length) return h("p", { class: "muted" }, "Nenhum prazo corre a partir deste documento.");
  return h("div", { class: "table-wrap" }, h("table", { class: "deadlines", "data-deadlines": "" },
    h("thead", {}, h("tr", {}, h("th", {}, "prazo"), h("th", {}, "dias"), h("th", {}, "último dia"), h("th", {}, "situação"))),
    h("tbody", {}, dls.map((x) => h("tr", { "data-deadline": x.id },
      h("td", {}, x.label, x.article ? h("span", { class: "art" }, ` (${x.article})`) : null, x.note ? h("div", { class: "muted" }, x.note) : null),
      h("td", {}, x.days ? `${x.days}${x.business_days ? " úteis" : ""}` : "—"),
      h("td", {}, x.last_day || "—"),
      h("td", { class: "dl-" + x.status }, DEADLINE_STATUS[x.status] || x.status))))));
}

function editsList(edits) {
  if (!edits.length) return null;
  return h("details", { class: "edits", "data-edits": "" }, h("summary", {}, `Alterações da minuta (${edits.length})`),
    h("ul", {}, edits.map((e) => h("li", {}, `${fmtDateTime.format(new Date(e.at))} — ${e.actor.name}: ${EDIT_LABELS[e.field] || e.field.replace("field.", "campo ")}: “${e.before || "—"}” → “${e.after}”`))));
}

function fieldRow(f) {
  const pending = f.pending || (f.by_hand && !f.value);
  return [h("dt", {}, f.label, f.article ? h("span", { class: "art" }, ` (${f.article})`) : null),
    h("dd", { class: pending ? "byhand" : "", "data-field-id": f.id }, pending ? "a preencher pelo fiscal" : f.value)];
}

// docBody: the document as the fiscal reads it, above its buttons.
function docBody(v, d) {
  const pen = d.penalty || {}, nc = d.on_non_compliance;
  return [
    h("h3", {}, `${d.title || "Documento"}${v.id ? " nº " + v.id : ""} — `, h("span", { "data-doc-state": v.state }, v.state_label || v.state)),
    v.stored ? null : h("p", { class: "banner" }, "Minuta preparada pelo sistema, ainda não salva: salve-a para numerar, emitir e gerar o PDF."),
    v.why ? h("p", { class: "banner", "data-why": "" }, v.why) : null,
    constatacoesList(v.alert_constatacoes || []),
    h("p", { class: "muted" }, [d.article, d.code_title, d.code_version ? "versão " + d.code_version : "", d.department].filter(Boolean).join(" — ")),
    d.refers_to ? h("p", {}, `Refere-se a ${d.refers_to.title || ""} ${d.refers_to.id}`) : null,
    d.corrects ? h("p", { "data-corrects": "" }, `Corrige ${d.corrects.title || ""} ${d.corrects.id}`) : null,
    v.corrected_by ? h("p", { class: "banner", "data-corrected-by": "" }, `Ato corrigido por ${v.corrected_by}: os próximos passos seguem no novo ato.`) : null,
    h("dl", { class: "fields" }, (d.fields || []).flatMap(fieldRow)),
    h("h4", {}, "Penalidade"),
    h("p", { "data-penalty": "" }, pen.text || "—"),
    nc ? h("p", {}, h("b", {}, "Se não regularizar no prazo: "), nc.text) : null,
    (nc && nc.appeal_note) || pen.appeal_note ? h("p", { class: "muted" }, (nc && nc.appeal_note) || pen.appeal_note) : null,
    peopleList(v),
    h("h4", {}, "Prazos"),
    deadlinesTable(v.deadlines || []),
    (d.notes || []).length ? h("ul", { class: "notes muted" }, d.notes.map((n) => h("li", {}, n))) : null,
    editsList(v.edits || []),
  ];
}

// ---- the panel -------------------------------------------------------------

// docPanel(boxOf): the documents of the alert cards, boxOf(alertId) being
// the card's [data-notice] element.
export function docPanel(boxOf) {
  const panel = { openAlertDoc, openDoc };
  // The alert's document: the stored one, or a fresh draft.
  async function openAlertDoc(alertId) {
    render(alertId, await api(`${alertPath(alertId)}/notice`, { feature: "O documento do alerta" }));
  }
  async function openDoc(alertId, docId) {
    render(alertId, await api(docPath(docId), { feature: "O documento" }));
  }
  // The result line of the document shown now (it may have been redrawn).
  const sayAfter = (alertId, msg) => { const r = $("[data-doc-result]", boxOf(alertId)); if (r) { r.className = "result"; r.textContent = msg; } };
  function context(alertId, v, res, formBox) {
    const sayDoc = (text, cls = "") => { res.className = "result " + cls; res.textContent = text; };
    const c = { alertId, v, d: v.draft || {}, id: v.id, fiscal: S.me.role === "fiscal", panel,
      close: () => formBox.replaceChildren(),
      sayAfter: (msg) => sayAfter(alertId, msg),
      show: (doc, msg) => { render(alertId, doc); sayAfter(alertId, msg); },
      post: (path, body, feature) => api(path, { method: "POST", body, feature }) };
    c.act = async (fn, ok) => {
      sayDoc("enviando…", "muted");
      try { const msg = await fn(); if (res.isConnected) sayDoc(msg || ok); else sayAfter(alertId, msg || ok); } catch (e) { sayDoc(e.message, "error"); }
    };
    c.after = (out, msg) => c.show(out.notice || out, msg);
    c.step = (k, body) => c.post(`${docPath(c.id)}/${k}`, body, STEP_LABELS[k]);
    return c;
  }
  function render(alertId, v) {
    const box = boxOf(alertId);
    if (!box) return;
    S.notices.set(alertId, v);
    box.hidden = false;
    box.dataset.doc = v.stored ? v.id : "";
    box.dataset.state = v.state;
    const res = h("div", { class: "result", "data-doc-result": "", role: "status" });
    const formBox = h("div", { class: "form-box" });
    const c = context(alertId, v, res, formBox);
    const forms = stepForms(c);
    const open = (k) => { formBox.replaceChildren(forms[k]()); const first = formBox.querySelector("input, textarea, select"); if (first) first.focus(); };
    fill(box, docBody(v, c.d),
      c.fiscal && v.stored && !(v.actions || []).length ? h("p", { class: "muted" }, "Nenhuma ação cabe agora neste documento.") : null,
      h("div", { class: "actions" }, docButtons(c, forms, open)),
      followUpNote(c),
      formBox, res);
  }
  return panel;
}
