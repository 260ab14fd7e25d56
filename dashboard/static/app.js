// Sossego dashboard: a dependency-free single-page UI (pt-BR).
// Data: the JSON API under /api/v1 (docs/api.md) and the live hub at /ws
// (dashboard/hub.go). Every time is shown in America/Sao_Paulo.
"use strict";
(() => {
  const TZ = "America/Sao_Paulo";
  const $ = (sel, el = document) => el.querySelector(sel);
  const h = (tag, attrs = {}, ...kids) => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
    return el;
  };
  // replaceChildren, leaving out null/undefined/false (conditional parts).
  const fill = (el, ...kids) => el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));
  const fmtTime = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  const fmtHM = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, hour: "2-digit", minute: "2-digit", hour12: false });
  const fmtDateTime = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
  const db = (v) => (v === null || v === undefined || Number.isNaN(v)) ? "—" : Number(v).toLocaleString("pt-BR", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const GRADES = { class1: "classe 1", class2: "classe 2", screening: "triagem (indicativo)" };
  const ROLES = { operador: "operador", fiscal: "fiscal", admin: "administrador" };
  const ALERT_STATES = { pending: "pendente", firing: "em curso", resolved: "encerrado", cancelled: "cancelado", no_data: "sem dados" };

  // ---- state --------------------------------------------------------------
  const S = {
    me: null,
    sensors: new Map(), // id → {id, municipality, gateway, code, zone, address, grade, level, env, limit}
    gateways: new Map(), // id → status
    alerts: new Map(), // id → alert
    notices: new Map(), // alert id → document view shown (docs/workflow-api.md)
    triage: new Map(), // alert id → {acked, acked_by, acked_at, assignee, …}
    assignees: null, // user names of the fiscais an alert may be assigned to
    codes: null,
    labels: null, // pt-BR labels of the codes vocabularies (GET /api/v1/labels)
    codeViews: new Map(),
    filter: localStorage.getItem("sossego.filter") || "",
    ws: null, wsRetry: 0, wsStop: false,
    view: null, // {name, update(kind, data)}
    unseen: 0,
  };

  // Hooks the end-to-end tests replace (sound and browser notification).
  const notify = {
    sound() {
      try {
        S.audio = S.audio || new (window.AudioContext || window.webkitAudioContext)();
        const ctx = S.audio, t = ctx.currentTime;
        for (const [i, f] of [[0, 880], [1, 660], [2, 880]]) {
          const o = ctx.createOscillator(), g = ctx.createGain();
          o.type = "sine"; o.frequency.value = f;
          g.gain.setValueAtTime(0.0001, t + i * 0.25);
          g.gain.exponentialRampToValueAtTime(0.3, t + i * 0.25 + 0.02);
          g.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.25 + 0.22);
          o.connect(g).connect(ctx.destination);
          o.start(t + i * 0.25); o.stop(t + i * 0.25 + 0.24);
        }
      } catch (e) { /* no audio device: the toast still shows */ }
    },
    notification(title, body) {
      if (!("Notification" in window) || Notification.permission !== "granted") return;
      try { new Notification(title, { body, icon: "/static/icon.svg", tag: "sossego-alerta" }); } catch (e) { /* ignore */ }
    },
  };
  window.sossego = { notify, state: S, api, h, toast }; // notify.js (the notifications page) uses api, h and toast

  // ---- API ----------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, msg, missing) { super(msg); this.status = status; this.missing = missing; }
  }
  async function api(path, opts = {}) {
    const init = { method: opts.method || "GET", credentials: "same-origin", headers: {} };
    if (init.method !== "GET") {
      if (S.me) init.headers["X-CSRF-Token"] = S.me.csrf_token;
      if (opts.body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(opts.body); }
    }
    let resp;
    try { resp = await fetch(path, init); } catch (e) { throw new ApiError(0, "sem conexão com o servidor"); }
    if (opts.raw && resp.ok) return resp;
    const ct = resp.headers.get("Content-Type") || "";
    const data = ct.includes("json") ? await resp.json().catch(() => null) : null;
    if (!resp.ok) {
      const msg = (data && (data.erro || data.error)) || resp.statusText || "erro";
      // A route this server lacks (404 from the catch-all, 405, 501) — not a 404 about an unknown alert or document.
      const unknownRoute = !data || !data.erro || data.erro.startsWith("recurso não encontrado");
      const missing = resp.status === 404 && !!opts.feature && unknownRoute || resp.status === 405 || resp.status === 501;
      if (resp.status === 401 && path !== "/api/v1/login" && path !== "/api/v1/me") sessionLost("Sua sessão terminou. Entre novamente.");
      throw new ApiError(resp.status, missing ? `${opts.feature || "Esta função"} ainda não está disponível neste servidor (${init.method} ${path.split("?")[0]}).` : msg, missing);
    }
    return data;
  }

  function toast(text, cls = "") {
    const el = h("div", { class: "toast " + cls, role: "status" }, text);
    $("#toasts").append(el);
    setTimeout(() => el.remove(), 6000);
  }
  function banner(text) {
    const b = $("#banner");
    b.hidden = !text; b.textContent = text || "";
  }

  // ---- login --------------------------------------------------------------
  function showLogin(msg) {
    S.me = null;
    S.wsStop = true;
    if (S.ws) S.ws.close();
    $("#login").hidden = false;
    $("#nav").hidden = true; $("#who").hidden = true;
    $("#view").replaceChildren();
    banner("");
    const err = $("#login-error");
    err.hidden = !msg; err.textContent = msg || "";
  }
  function sessionLost(msg) { if (S.me) showLogin(msg); }

  $("#login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const btn = $("#login-submit");
    btn.disabled = true;
    // Create the audio context inside the user's gesture so alerts can beep.
    try { S.audio = S.audio || new (window.AudioContext || window.webkitAudioContext)(); } catch (e) { /* none */ }
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
    $("#login").hidden = true;
    $("#nav").hidden = false; $("#who").hidden = false;
    $("#user-name").textContent = me.user;
    $("#user-role").textContent = ROLES[me.role] || me.role;
    await Promise.all([loadSensors(), loadGateways(), loadAlerts(), loadLabels()]);
    connect();
    route();
  }

  // ---- data loading -------------------------------------------------------
  function sensor(id) {
    let s = S.sensors.get(id);
    if (!s) { s = { id, level: null, env: null }; S.sensors.set(id, s); }
    return s;
  }
  async function loadSensors() {
    try {
      const data = await api("/api/v1/sensors");
      for (const v of data.sensors || []) {
        const s = sensor(v.id);
        Object.assign(s, { municipality: v.municipality, gateway: v.gateway, code: v.code || v.municipality, zone: v.zone, address: v.address, grade: v.meter && v.meter.grade, meter: v.meter, establishments: v.establishments });
        if (v.latest && !s.level) {
          s.level = { sensor: v.id, t: v.latest.t, laeq_db: v.latest.laeq_db, lafmax_db: v.latest.lafmax_db, grade: v.latest.grade, clock_synced: v.latest.clock_synced };
          if (v.limit) { s.level.limit_db = v.limit.limit_dba; s.level.period = v.limit.period; s.level.period_end = v.limit.until; s.level.margin_db = v.latest.laeq_db - v.limit.limit_dba; }
        }
      }
    } catch (e) { banner("Não foi possível carregar o cadastro de sensores: " + e.message + " Os valores ao vivo aparecem assim que chegarem."); }
  }
  async function loadGateways() {
    try {
      const data = await api("/api/v1/gateways");
      for (const g of data.gateways || []) S.gateways.set(g.gateway, { gateway: g.gateway, municipality: g.municipality, state: g.state, name: g.name, clock_synced: g.clock ? g.clock.synced : undefined, clock_offset_ms: g.clock ? g.clock.offset_ms : undefined, clock_source: g.clock && g.clock.source, last_seen: g.last_seen });
    } catch (e) { /* the live feed fills gateways in */ }
  }
  async function loadAlerts() {
    try {
      const data = await api("/api/v1/alerts?limit=200");
      for (const a of data.alerts || []) S.alerts.set(a.id, a);
    } catch (e) { S.alertsError = e.message; }
    try {
      const data = await api("/api/v1/alert-cases", { feature: "A triagem de alertas" });
      for (const t of data.cases || []) S.triage.set(t.alert_id, t);
      S.assignees = data.assignees || null;
    } catch (e) { /* older server: no triage; the buttons say so when used */ }
    updateAlertCount();
  }

  // ---- live hub -----------------------------------------------------------
  function setLive(on, text) {
    const el = $("#live");
    el.className = "live " + (on ? "on" : "off");
    $("#live-text").textContent = text;
  }
  function connect() {
    S.wsStop = false;
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    const ws = new WebSocket(url);
    S.ws = ws;
    setLive(false, "conectando…");
    ws.onopen = () => { S.wsRetry = 0; setLive(true, "ao vivo"); setConnected(true); };
    ws.onmessage = (ev) => { let m; try { m = JSON.parse(ev.data); } catch (e) { return; } onMessage(m); };
    ws.onclose = (ev) => {
      if (S.ws !== ws) return;
      S.ws = null;
      setConnected(false);
      if (ev.code === 4001) { sessionLost("Sua sessão terminou. Entre novamente."); return; }
      if (S.wsStop) return;
      setLive(false, ev.code === 4000 ? "reconectando (conexão lenta)…" : "reconectando…");
      const wait = Math.min(30000, 500 * 2 ** S.wsRetry++);
      setTimeout(async () => {
        if (S.wsStop) return;
        try { await api("/api/v1/me"); connect(); } catch (e) { if (e.status !== 401) { S.wsRetry++; setTimeout(connect, wait); } }
      }, wait);
    };
  }
  function onMessage(m) {
    switch (m.type) {
      case "hello": S.tickMs = m.tick_ms; if (m.server_time) S.clockOffset = Date.parse(m.server_time) - Date.now(); break;
      case "snapshot":
      case "update": {
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
        break;
      }
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
      const title = ev.kind === "firing" ? `Alerta: ${a.sensor} acima do limite` : `Sensor ${a.sensor} sem dados`;
      const body = ev.kind === "firing" ? `${db(a.laeq_db)} dB(A) para limite de ${db(a.limit_db)} dB(A) — ${a.article || ""}` : "Verifique o gateway.";
      S.unseen++;
      S.fresh = S.fresh || new Set();
      S.fresh.add(a.id);
      toast(title + " — " + body, "alarm");
      notify.sound();
      notify.notification(title, body);
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
    window.dispatchEvent(new CustomEvent("sossego:case", { detail: c })); // cases.js refreshes the alert cards' case lines
    if (c.by === S.me.user) return; // the acting page already says it
    const what = CASE_ACTIONS[c.action] || c.action;
    const doc = c.notice_id ? ` (${c.title ? c.title + " " : ""}${c.notice_id})` : "";
    toast(`Alerta ${c.alert_id || ""}: ${what}${c.action === "assign" && c.assignee ? " a " + c.assignee : ""}${doc} por ${c.by || "outro fiscal"}.`);
  }
  function openAlerts() { return [...S.alerts.values()].filter((a) => a.state === "pending" || a.state === "firing" || (a.kind === "no_data" && a.state !== "resolved" && a.state !== "cancelled")); }
  function updateAlertCount() {
    const n = openAlerts().length;
    const b = $("#alert-count");
    b.hidden = n === 0; b.textContent = String(n);
  }

  // ---- data age -----------------------------------------------------------
  // A value is "now" only when its record is: live (< 5 s old), late (a
  // record received well after its own time — a replayed backlog — shown
  // with its own date and time), stale (nothing received for STALE_MS),
  // or its gateway offline. Colours are for live values only; a lost
  // connection to the server greys everything.
  const LIVE_MS = 5000, STALE_MS = 30000;
  const serverNow = () => Date.now() + (S.clockOffset || 0);
  function setConnected(on) {
    S.connected = on;
    document.body.classList.toggle("disconnected", !on);
    if (!on) S.disconnectedAt = S.disconnectedAt || Date.now(); else S.disconnectedAt = 0;
    const msg = "Sem conexão com o servidor: os valores mostrados não são de agora. Reconectando…";
    if (!on && S.me) banner(msg);
    else if (on && $("#banner").textContent === msg) banner("");
  }
  // A late record does not hide a newer value already shown.
  function acceptLevel(s, l) {
    const t = Date.parse(l.t), rec = l.received_at ? Date.parse(l.received_at) : t;
    const cur = s.level;
    if (rec - t > LIVE_MS && cur && Date.parse(cur.t) > t) { s.lateLevel = l; return; }
    s.level = l;
    s.lateLevel = rec - t > LIVE_MS ? l : null;
  }
  function freshness(s) {
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
  const ageClass = (f) => "age-" + f.state;

  // ---- helpers for views --------------------------------------------------
  function marginClass(l) {
    if (!l || l.limit_db === undefined || l.limit_db === null) return "none";
    const m = l.margin_db !== undefined && l.margin_db !== null ? l.margin_db : l.laeq_db - l.limit_db;
    return m > 0 ? "over" : m > -3 ? "near" : "ok";
  }
  function marginText(l) {
    if (!l || l.limit_db === undefined || l.limit_db === null) return "sem limite numérico agora";
    const m = l.margin_db !== undefined && l.margin_db !== null ? l.margin_db : l.laeq_db - l.limit_db;
    return (m > 0 ? "+" : "") + db(m) + " dB " + (m > 0 ? "acima do limite" : "abaixo do limite");
  }
  function gatewayOf(s) { return s.gateway ? S.gateways.get(s.gateway) : null; }
  function clockText(s) {
    const g = gatewayOf(s);
    const synced = s.level && s.level.clock_synced !== undefined ? s.level.clock_synced : g && g.clock_synced;
    if (synced === undefined || synced === null) return "relógio: desconhecido";
    return synced ? "relógio sincronizado" : "relógio NÃO sincronizado";
  }
  function periodText(l) {
    if (!l || !l.period) return "";
    let t = l.period_label || ("período " + l.period);
    if (l.period_end) t += " até " + fmtHM.format(new Date(l.period_end));
    return t;
  }

  // ---- router -------------------------------------------------------------
  function route() {
    if (!S.me) return;
    const hash = location.hash || "#/";
    let m;
    document.querySelectorAll("nav a").forEach((a) => a.classList.remove("active"));
    const nav = (n) => { const a = document.querySelector(`nav a[data-nav="${n}"]`); if (a) a.classList.add("active"); };
    if ((m = hash.match(/^#\/sensor\/(.+)$/))) { nav("overview"); S.view = sensorView(decodeURIComponent(m[1])); }
    else if (hash.startsWith("#/alertas")) { nav("alerts"); S.view = alertsView(); }
    else if ((m = hash.match(/^#\/codigos(?:\/(.+))?$/))) { nav("codes"); S.view = codesView(m[1] ? decodeURIComponent(m[1]) : ""); }
    else if (hash.startsWith("#/notificacoes") && window.sossegoNotify) { nav("notify"); S.view = window.sossegoNotify.page($("#view")); }
    else if (hash.startsWith("#/metrologia") && window.sossegoPages && window.sossegoPages.metrologia) { nav("metrology"); S.view = window.sossegoPages.metrologia($("#view")); }
    else if (hash.startsWith("#/relatorios") && window.sossegoPages && window.sossegoPages.relatorios) { nav("reports"); S.view = window.sossegoPages.relatorios($("#view")); }
    else if (hash.startsWith("#/casos") && window.sossegoPages && window.sossegoPages.casos) { nav("cases"); S.view = window.sossegoPages.casos($("#view")); }
    else if (hash.startsWith("#/administracao") && window.sossegoPages && window.sossegoPages.administracao) { nav("admin"); S.view = window.sossegoPages.administracao($("#view")); }
    else { nav("overview"); S.view = overviewView(); }
  }
  window.addEventListener("hashchange", route);

  // ---- overview -----------------------------------------------------------
  function overviewView() {
    const root = $("#view");
    const cards = new Map();
    const municipalities = () => [...new Set([...S.sensors.values()].map((s) => s.municipality).filter(Boolean))].sort();
    const select = h("select", { id: "filter", "aria-label": "Filtrar por município", onchange: () => { S.filter = select.value; localStorage.setItem("sossego.filter", S.filter); render(); } });
    const count = h("span", { class: "muted" });
    const grid = h("div", { class: "grid", id: "sensors" });
    root.replaceChildren(h("h1", {}, "Sensores ao vivo"), h("div", { class: "toolbar" }, h("label", {}, "Município ", select), count), grid);

    function fillSelect() {
      const opts = [h("option", { value: "" }, "todos")].concat(municipalities().map((m) => h("option", { value: m }, m)));
      select.replaceChildren(...opts);
      select.value = S.filter;
      if (select.value !== S.filter) { S.filter = ""; select.value = ""; }
    }
    function card(s) {
      const l = s.level;
      const g = gatewayOf(s);
      const f = freshness(s);
      const cls = f.state === "live" ? marginClass(l) : "none"; // colours mean "now"
      const el = h("a", { class: "card " + cls + " " + ageClass(f), href: "#/sensor/" + encodeURIComponent(s.id), "data-sensor": s.id, "data-age": f.state },
        h("div", { class: "head" }, h("span", { class: "id" }, s.id), h("span", { class: "muted" }, s.municipality || "")),
        s.address ? h("div", { class: "addr" }, s.address) : null,
        h("div", { class: "level" },
          h("span", { class: "value", "data-field": "laeq" }, l ? db(l.laeq_db) : "—"), h("span", {}, "dB(A)"),
          h("span", { class: "margin " + cls, "data-field": "margin" }, marginText(l))),
        h("div", { class: "age " + ageClass(f), "data-field": "age" }, f.text),
        h("div", { class: "facts" },
          h("span", {}, l && l.limit_db !== undefined && l.limit_db !== null ? `limite ${db(l.limit_db)} dB(A)` : "sem limite"),
          h("span", {}, periodText(l)),
          h("span", {}, l ? "LAFmax " + db(l.lafmax_db) : "")),
        h("div", { class: "facts" },
          h("span", {}, h("span", { class: "dot " + (g ? g.state : "") }), g ? `gateway ${g.gateway} ${g.state === "online" ? "online" : g.state === "offline" ? "offline" : "sem status"}` : "gateway desconhecido"),
          h("span", {}, clockText(s)),
          s.grade || (l && l.grade) ? h("span", { class: "grade " + (s.grade || l.grade) }, GRADES[s.grade || l.grade] || s.grade || l.grade) : null,
          l ? h("span", { title: "hora da última leitura" }, (serverNow() - Date.parse(l.t) < 12 * 3600e3 ? "às " + fmtTime.format(new Date(l.t)) : "em " + fmtDateTime.format(new Date(l.t)))) : h("span", {}, "sem leituras")));
      return el;
    }
    // Ages move without data: every second each card is redrawn.
    const ageTimer = setInterval(() => {
      if (S.view !== view) { clearInterval(ageTimer); return; }
      for (const [id, old] of cards) { const c = card(sensor(id)); old.replaceWith(c); cards.set(id, c); }
    }, 1000);
    function render() {
      fillSelect();
      const list = [...S.sensors.values()].filter((s) => !S.filter || s.municipality === S.filter).sort((a, b) => (a.municipality || "").localeCompare(b.municipality || "") || a.id.localeCompare(b.id));
      cards.clear();
      grid.replaceChildren(...list.map((s) => { const c = card(s); cards.set(s.id, c); return c; }));
      count.textContent = list.length === 0 ? "nenhum sensor ainda" : `${list.length} sensor${list.length > 1 ? "es" : ""}`;
    }
    render();
    const view = {
      live(changed, m) {
        if ((m.gateways || []).length || changed.some((id) => !cards.has(id) && (!S.filter || sensor(id).municipality === S.filter))) { render(); return; }
        for (const id of new Set(changed)) { const old = cards.get(id); if (old) { const c = card(sensor(id)); old.replaceWith(c); cards.set(id, c); } }
      },
    };
    return view;
  }

  // ---- sensor detail ------------------------------------------------------
  const RANGES = { "15min": { ms: 15 * 60e3, step: "1s", label: "15 min", series: "LAeq (1 s)" }, "1h": { ms: 3600e3, step: "10s", label: "1 h", series: "LAeq (10 s)" }, "24h": { ms: 86400e3, step: "2m", label: "24 h", series: "LAeq (2 min)" } };
  function sensorView(id) {
    const root = $("#view");
    const s = sensor(id);
    let range = "15min";
    let points = []; // {t (ms), laeq, lafmax, l90}
    let limitSteps = []; // {a, b (ms), v (dB or null), night}: the limit in force, from the server
    let windowFig = null, windowTo = null, loadedAt = Date.now(); // the window's figures (server) and when read
    // The server's steps, extended past the load by the limit the live
    // values carry (the hub sends the server's exact limit in force).
    function liveSteps() {
      const out = limitSteps.slice();
      const l = s.level, last = out[out.length - 1];
      const end = last ? last.b : 0;
      if (l && l.t && Date.parse(l.t) > end) out.push({ a: end || Date.parse(l.t), b: Date.now() + 1000, v: typeof l.limit_db === "number" ? l.limit_db : null, night: l.period === "noturno" });
      return out;
    }
    let loadMsg = "";
    const seg = h("div", { class: "seg", role: "group", "aria-label": "Janela do gráfico" },
      Object.entries(RANGES).map(([k, r]) => h("button", { type: "button", "data-range": k, class: k === range ? "on" : "", onclick: () => { range = k; seg.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b.dataset.range === k)); load(); } }, r.label)));
    const head = h("div");
    const chartBox = h("div", { id: "chart", class: "chart", role: "img" });
    let lc = null; // levelChart, made once chartBox is in the page (it needs the width)
    const stats = h("div", { class: "stats" });
    const env = h("div", { class: "env", id: "env" });
    const ENV_MS = 86400e3;
    let envRecs = []; // {t (ms), temp, rh, p, wind}, time order
    let envMsg = "";
    const msg = h("p", { class: "muted" });
    fill(root,
      h("p", {}, h("a", { href: "#/" }, "← todos os sensores")),
      head,
      h("div", { class: "panel" }, h("div", { class: "toolbar" }, seg, msg), chartBox,
        h("div", { class: "legend" }, h("span", {}, h("i", { class: "lg-night" }), "período noturno (faixa sombreada)"))),
      h("h2", {}, "Janela"), stats,
      h("h2", {}, "Ambiente (últimas 24 h)"), env);

    function renderHead() {
      const l = s.level, g = gatewayOf(s), f = freshness(s);
      const cls = f.state === "live" ? marginClass(l) : "none";
      fill(head,
        h("h1", {}, `Sensor ${s.id}`),
        h("div", { class: "level " + ageClass(f), "data-age": f.state }, h("span", { class: "value", id: "detail-laeq" }, l ? db(l.laeq_db) : "—"), h("span", {}, "dB(A)"),
          h("span", { class: "margin " + cls }, marginText(l)), h("span", { class: "age " + ageClass(f), id: "detail-age" }, f.text)),
        s.lateLevel && s.lateLevel !== l ? h("p", { class: "age age-late", id: "detail-late" }, `chegando leituras atrasadas: registro de ${fmtDateTime.format(new Date(s.lateLevel.t))} (${db(s.lateLevel.laeq_db)} dB(A))`) : null,
        h("div", { class: "facts" },
          h("span", {}, s.municipality || ""), h("span", {}, s.address || ""), h("span", {}, s.zone ? label("zone", s.zone) : ""),
          h("span", {}, l && l.limit_db !== undefined && l.limit_db !== null ? `limite ${db(l.limit_db)} dB(A), ${periodText(l)}` : "sem limite numérico agora"),
          h("span", {}, h("span", { class: "dot " + (g ? g.state : "") }), g ? `gateway ${g.gateway} ${g.state || "sem status"}` : ""),
          h("span", {}, clockText(s)),
          s.grade ? h("span", { class: "grade " + s.grade }, GRADES[s.grade] || s.grade) : null,
          s.meter && s.meter.calibrated_at ? h("span", {}, "calibrado em " + s.meter.calibrated_at.split("-").reverse().join("/")) : null));
      renderEnv();
    }
    // Environment: the last 24 h from /api/v1/sensors/{id}/env, extended by
    // the live hub's env updates; latest values, sparklines and a table.
    function addEnv(e) {
      const t = Date.parse(e.t);
      const last = envRecs[envRecs.length - 1];
      if (!Number.isFinite(t) || (last && t <= last.t)) return false;
      envRecs.push({ t, temp: e.temp_c ?? e.temperature_c, rh: e.rh_pct ?? e.humidity_pct, p: e.pressure_hpa, wind: e.wind_ms });
      return true;
    }
    async function loadEnv() {
      const to = new Date(), from = new Date(to - ENV_MS);
      try {
        const data = await api(`/api/v1/sensors/${encodeURIComponent(id)}/env?from=${from.toISOString()}&to=${to.toISOString()}`, { feature: "O histórico ambiental" });
        const live = envRecs;
        envRecs = [];
        for (const r of data.records || []) addEnv(r);
        for (const r of live) if (!envRecs.length || r.t > envRecs[envRecs.length - 1].t) envRecs.push(r);
        envMsg = "";
      } catch (e) { envMsg = e.message; }
      if (s.env) addEnv(s.env);
      renderEnv();
    }
    const num = (v, d = 1) => v === undefined || v === null ? "—" : Number(v).toLocaleString("pt-BR", { minimumFractionDigits: d, maximumFractionDigits: d });
    function spark(key, label) {
      const NS = "http://www.w3.org/2000/svg";
      const W = 160, H = 36;
      const now = Date.now(), t0 = now - ENV_MS;
      const pts = envRecs.filter((r) => r.t >= t0 && typeof r[key] === "number");
      const svg = document.createElementNS(NS, "svg");
      svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
      svg.setAttribute("class", "spark");
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", `${label} nas últimas 24 h`);
      if (pts.length < 2) return svg;
      let lo = Math.min(...pts.map((r) => r[key])), hi = Math.max(...pts.map((r) => r[key]));
      if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
      const line = document.createElementNS(NS, "polyline");
      line.setAttribute("points", pts.map((r) => `${((r.t - t0) / ENV_MS * W).toFixed(1)},${(2 + (hi - r[key]) / (hi - lo) * (H - 4)).toFixed(1)}`).join(" "));
      svg.append(line);
      return svg;
    }
    function renderEnv() {
      const last = envRecs[envRecs.length - 1];
      if (!last) {
        env.replaceChildren(h("p", { class: "muted", "data-env": "none" }, envMsg || "Sem leituras ambientais deste sensor nas últimas 24 h."));
        return;
      }
      const t0 = Date.now() - ENV_MS;
      const day = envRecs.filter((r) => r.t >= t0);
      const q = (key, label, unit, d) => {
        const vals = day.map((r) => r[key]).filter((v) => typeof v === "number");
        return h("div", { class: "stat", "data-env": key }, label, h("b", {}, last[key] === undefined || last[key] === null ? "—" : `${num(last[key], d)} ${unit}`),
          spark(key, label),
          vals.length ? h("small", { class: "muted" }, `24 h: ${num(Math.min(...vals), d)}–${num(Math.max(...vals), d)} ${unit}`) : null);
      };
      // The table: the newest reading of each of the last 6 hours, newest first.
      const rows = [];
      const seen = new Set();
      for (let i = day.length - 1; i >= 0 && rows.length < 6; i--) {
        const hour = Math.floor(day[i].t / 3600e3);
        if (seen.has(hour)) continue;
        seen.add(hour);
        rows.push(day[i]);
      }
      fill(env,
        h("div", { class: "stats" },
          q("temp", "Temperatura", "°C", 1), q("rh", "Umidade relativa", "%", 0), q("p", "Pressão", "hPa", 1),
          typeof last.wind === "number" ? q("wind", "Vento", "m/s", 1) : null,
          h("div", { class: "stat" }, "Leitura", h("b", {}, fmtTime.format(new Date(last.t))), h("small", { class: "muted" }, `${day.length} leituras em 24 h`))),
        h("div", { class: "table-wrap" }, h("table", { class: "env-table", "data-env-table": "" },
          h("thead", {}, h("tr", {}, h("th", {}, "Hora"), h("th", {}, "Temperatura (°C)"), h("th", {}, "Umidade relativa (%)"), h("th", {}, "Pressão (hPa)"))),
          h("tbody", {}, rows.map((r) => h("tr", {}, h("td", {}, fmtHM.format(new Date(r.t))), h("td", {}, num(r.temp, 1)), h("td", {}, num(r.rh, 0)), h("td", {}, num(r.p, 1))))))),
        envMsg ? h("p", { class: "muted" }, envMsg) : null);
    }
    async function load() {
      const r = RANGES[range];
      const to = new Date(), from = new Date(to - r.ms);
      msg.textContent = "carregando…";
      try {
        const data = await api(`/api/v1/readings?sensor=${encodeURIComponent(id)}&from=${from.toISOString()}&to=${to.toISOString()}&step=${r.step}`, { feature: "O histórico de leituras" });
        const rows = data.records || data.buckets || [];
        points = rows.map((x) => ({ t: Date.parse(x.t || x.start), laeq: x.laeq_db, lafmax: x.lafmax_db, l90: x.l90_db }));
        // The limit in force over the window, as the server's codes engine
        // states it (holidays and service days included).
        limitSteps = (data.limits || []).map((x) => ({ a: Date.parse(x.start), b: Date.parse(x.end), v: typeof x.limit_dba === "number" ? x.limit_dba : null, night: x.period === "noturno" }));
        // The window's figures from the server: LAeq by energy, L90 from the
        // merged histograms, the coverage (what the window holds).
        windowFig = data.window || null;
        windowTo = to;
        loadMsg = rows.length ? "" : "Nenhuma leitura nesta janela.";
      } catch (e) { points = []; limitSteps = []; windowFig = null; loadMsg = e.message; }
      loadedAt = Date.now();
      msg.textContent = loadMsg;
      draw();
    }
    function draw() {
      const r = RANGES[range];
      const now = Date.now();
      if (!lc) lc = levelChart(chartBox);
      lc.update(points, now - r.ms, now, liveSteps(), r.series);
      const win = points.filter((p) => p.t >= now - r.ms && p.laeq !== undefined);
      const stat = (label, v, key) => h("div", { class: "stat", "data-stat": key }, label, h("b", {}, v));
      const w = windowFig;
      const until = windowTo ? ` (até ${fmtTime.format(windowTo)})` : "";
      if (w && w.laeq_db !== null && w.laeq_db !== undefined) {
        const cov = (100 * (w.coverage || 0)).toLocaleString("pt-BR", { maximumFractionDigits: 0 });
        const basis = w.percentile_basis === "laeq_1s" ? "do LAeq de 1 s" : w.percentile_basis === "misto" ? "dos histogramas e do LAeq de 1 s" : "dos histogramas";
        stats.replaceChildren(stat(`LAeq ${r.label}, cobertura ${cov} %${until}`, db(w.laeq_db) + " dB", "laeq"),
          stat("LAFmax da janela", db(w.lafmax_db) + " dB", "lafmax"),
          stat(`L90 da janela, ${basis}`, db(w.l90_db) + " dB", "l90"),
          stat("Leituras no gráfico", String(win.length), "count"));
      } else {
        // Without the server's figures only the chart's points are known:
        // their energy mean, labelled as such; no percentile.
        const leq = win.length ? 10 * Math.log10(win.reduce((a, p) => a + 10 ** (p.laeq / 10), 0) / win.length) : null;
        const max = win.length ? Math.max(...win.map((p) => p.lafmax ?? -Infinity)) : null;
        stats.replaceChildren(stat(`LAeq ${r.label} (média dos pontos do gráfico)`, db(leq) + " dB", "laeq"),
          stat("LAFmax dos pontos", (max === null || max === -Infinity) ? "—" : db(max) + " dB", "lafmax"),
          stat("Leituras no gráfico", String(win.length), "count"));
      }
    }
    renderHead();
    load();
    loadEnv();
    // Every second the data age; every 5 s the chart slides; every minute
    // the window (and its figures) is read again.
    let ticks = 0;
    const timer = setInterval(() => {
      if (S.view !== view) { clearInterval(timer); if (lc) lc.destroy(); return; }
      renderHead();
      if (++ticks % 5 === 0) draw();
      if (Date.now() - loadedAt > 60000) load();
    }, 1000);
    const view = {
      live(changed) {
        if (!changed.includes(id)) return;
        if (s.env) addEnv(s.env);
        renderHead();
        const l = s.level;
        if (l && l.t) {
          const t = Date.parse(l.t);
          const last = points[points.length - 1];
          if (!last || t > last.t) { points.push({ t, laeq: l.laeq_db, lafmax: l.lafmax_db }); draw(); }
        }
      },
    };
    return view;
  }

  // The sensor page's level chart, drawn by uPlot (vendored, see
  // scripts/vendor-uplot.sh): LAeq, LAFmax and L90 where present, the limit in
  // force as a stepped line and night shading, both from the server's limit
  // series (GET /api/v1/readings → limits).
  // One instance per view, fed with setData; rebuilt only when the set of
  // series changes; follows the container's width.
  const CHART = { laeq: "#1f5f8b", lafmax: "#9bb7cc", l90: "#6a9f58", limit: "#b3261e", night: "#e9eef6", axis: "#5d6b78", grid: "#e6eaee" };
  function levelChart(box) {
    let u = null, key = "", t0 = 0, t1 = 1, lo = 30, hi = 80, nights = [], newest = -1;
    const ro = new ResizeObserver(() => { if (u) u.setSize(size()); });
    ro.observe(box);
    function size() {
      const width = Math.max(200, box.clientWidth);
      return { width, height: width < 480 ? 220 : 300 };
    }
    const val = (u, v) => v === null || v === undefined ? "—" : db(v);
    function make(label, hasMax, hasL90) {
      const series = [
        { label: "Horário", value: (u, v) => v === null || v === undefined ? "—" : fmtTime.format(new Date(v)) },
        { label, stroke: CHART.laeq, width: 1.5, value: val },
      ];
      if (hasMax) series.push({ label: "LAFmax", stroke: CHART.lafmax, width: 1, value: val });
      if (hasL90) series.push({ label: "L90", stroke: CHART.l90, width: 1, dash: [2, 2], value: val });
      series.push({ label: "limite em vigor", stroke: CHART.limit, width: 1.5, dash: [6, 4], value: val, paths: uPlot.paths.stepped({ align: 1 }) });
      const axis = { stroke: CHART.axis, grid: { stroke: CHART.grid, width: 1 }, ticks: { stroke: CHART.grid, width: 1 }, font: "11px system-ui, sans-serif", labelFont: "12px system-ui, sans-serif" };
      return {
        ...size(), ms: 1,
        tzDate: (ts) => uPlot.tzDate(new Date(ts), TZ),
        scales: { x: { time: true, range: () => [t0, t1] }, y: { range: () => [lo, hi] } },
        axes: [
          { ...axis, label: "Horário", labelSize: 20, space: 60, values: (u, splits) => splits.map((t) => fmtHM.format(new Date(t))) },
          { ...axis, label: "dB(A)", labelSize: 18, size: 34, values: (u, splits) => splits.map((v) => String(v)) },
        ],
        series,
        cursor: { drag: { x: false, y: false } },
        legend: { live: true },
        hooks: {
          // with the cursor off the plot, the legend shows the newest reading
          // (uPlot would show "—")
          setCursor: [(u) => { if (u.cursor.idx == null && newest >= 0) u.setLegend({ idx: newest }); }],
          // night bands under the grid and the lines
          drawClear: [(u) => {
            const { ctx, bbox } = u;
            ctx.save();
            ctx.fillStyle = CHART.night;
            for (const [a, b] of nights) {
              const x0 = u.valToPos(a, "x", true), x1 = u.valToPos(b, "x", true);
              ctx.fillRect(x0, bbox.top, Math.max(1, x1 - x0), bbox.height);
            }
            ctx.restore();
          }],
        },
      };
    }
    // points: {t, laeq, lafmax, l90} in time order; [from, to] the window;
    // limits: the limit in force as steps {a, b, v, night} (the server's).
    function update(points, from, to, limits, label) {
      t0 = from; t1 = to;
      const pts = points.filter((p) => p.t >= from && p.t <= to);
      const inWin = limits.filter((x) => x.b > from && x.a < to).map((x) => ({ ...x, a: Math.max(x.a, from), b: Math.min(x.b, to) }));
      const steps = inWin.length ? inWin.map((x) => [x.a, x.v]) : [[from, null]];
      nights = inWin.filter((x) => x.night).map((x) => [x.a, x.b]);
      // rows: readings, a null row to break the lines at gaps, the limit's steps
      const rows = new Map();
      const row = (t) => { let r = rows.get(t); if (!r) { r = { t }; rows.set(t, r); } return r; };
      const num = (v) => typeof v === "number" ? v : undefined;
      const gap = Math.max(5000, (to - from) / 100);
      let prev = null;
      for (const p of pts) {
        if (prev !== null && p.t - prev > gap) Object.assign(row(prev + 1), { laeq: null, lafmax: null, l90: null });
        Object.assign(row(p.t), { laeq: num(p.laeq), lafmax: num(p.lafmax), l90: num(p.l90) });
        prev = p.t;
      }
      for (const [t, v] of steps) row(t).limit = v;
      row(to).limit = steps[steps.length - 1][1];
      const list = [...rows.values()].sort((a, b) => a.t - b.t);
      const hasMax = pts.some((p) => typeof p.lafmax === "number"), hasL90 = pts.some((p) => typeof p.l90 === "number");
      const data = [list.map((r) => r.t), list.map((r) => r.laeq)];
      if (hasMax) data.push(list.map((r) => r.lafmax));
      if (hasL90) data.push(list.map((r) => r.l90));
      data.push(list.map((r) => r.limit));
      const vals = [...pts.flatMap((p) => [p.laeq, p.lafmax]), ...steps.map((s) => s[1])].filter((v) => typeof v === "number");
      lo = Math.floor(Math.min(30, ...vals) / 10) * 10; hi = Math.ceil(Math.max(80, ...vals) / 10) * 10;
      const k = [label, hasMax, hasL90].join("|");
      if (!u || k !== key) {
        if (u) u.destroy();
        key = k;
        u = new uPlot(make(label, hasMax, hasL90), data, box);
      } else u.setData(data);
      // with the cursor off the plot, the legend shows the newest reading
      newest = data[1].length - 1;
      while (newest >= 0 && typeof data[1][newest] !== "number") newest--;
      if (newest >= 0 && !(u.cursor.left >= 0)) u.setLegend({ idx: newest });
      // for people and tests: what is drawn
      const last = steps[steps.length - 1][1];
      box.dataset.laeq = String(pts.filter((p) => typeof p.laeq === "number").length);
      box.dataset.lastT = String(pts.length ? pts[pts.length - 1].t : 0);
      box.dataset.limit = typeof last === "number" ? String(last) : "";
      box.dataset.nights = String(nights.length);
      box.setAttribute("aria-label", `Gráfico de níveis sonoros: ${box.dataset.laeq} leituras${box.dataset.limit ? `, limite em vigor ${db(last)} dB(A)` : ""}`);
    }
    function destroy() { ro.disconnect(); if (u) u.destroy(); u = null; }
    return { update, destroy };
  }

  async function codeView(id) {
    if (!id) return null;
    if (S.codeViews.has(id)) return S.codeViews.get(id);
    const v = await api("/api/v1/codes/" + encodeURIComponent(id));
    S.codeViews.set(id, v);
    return v;
  }

  // ---- alerts inbox -------------------------------------------------------
  // The fiscal's workflow API: docs/workflow-api.md (internal/workflowapi).
  const STEP_LABELS = { issue: "Emitir", ciente: "Registrar ciente", recusa: "Registrar recusa", regularize: "Registrar regularização",
    edit: "Editar minuta", constatacao: "Registrar constatação",
    auto: "Lavrar auto de infração", cancel: "Descartar minuta", decide: "Registrar julgamento" };
  const STEP_DONE = { issue: "Documento emitido.", ciente: "Ciente registrado.", recusa: "Recusa registrada com as testemunhas.",
    regularize: "Regularização registrada.", auto: "Auto de infração lavrado.", cancel: "Minuta descartada.", decide: "Julgamento registrado.",
    constatacao: "Constatação registrada." };
  const DEADLINE_STATUS = { waiting: "aguardando início", running: "correndo", expired: "vencido", done: "encerrado", not_allowed: "não cabe" };
  const CASE_ACTIONS = { ack: "reconhecido", assign: "atribuído", draft: "documento salvo", issue: "documento emitido", ciente: "ciente registrado",
    recusa: "recusa registrada", regularize: "regularização registrada", auto: "auto de infração lavrado", cancel: "minuta descartada", decide: "julgamento registrado",
    edit: "minuta editada", constatacao: "constatação registrada", correct: "ato corrigido por um novo ato" };
  const MEASUREMENTS = { sensor_window: "janela do sensor", on_site: "medição no local", statement: "declaração do fiscal com evidência" };
  const EDIT_LABELS = { "party.name": "notificado (nome)", "party.document": "notificado (CNPJ/CPF)", "party.address": "notificado (endereço)",
    lavratura_place: "local da lavratura", circumstances: "circunstâncias", prazo_days: "prazo (dias)" };
  // Fields a workflow step fills (not edited in the draft).
  const STEP_FIELDS = new Set(["agente", "autoridade", "autuante", "ciente", "testemunhas", "recusa", "assinaturas", "lavratura"]);
  // A decimal typed with a comma or a point; "" is null.
  const num = (v) => { const t = String(v || "").trim().replace(",", "."); return t === "" ? null : Number(t); };
  // datetime-local value in Brasília time (no daylight saving since 2019) from an instant.
  const localValue = (iso) => { const d = new Date(new Date(iso || Date.now()).getTime() - 3 * 3600e3); return d.toISOString().slice(0, 16); };
  const witnessText = (w) => w.doc_type === "rg" ? `${w.name} (RG ${w.document} ${w.issuer || ""})` : w.doc_type === "cpf" ? `${w.name} (CPF ${w.document})` : `${w.name} (${w.document})`;
  const isNoticeKind = (k) => k === "notificacao_preliminar" || k === "intimacao_preliminar" || k === "notificacao_intimacao";
  const alertPath = (id) => "/api/v1/alerts/" + encodeURIComponent(id);
  const docPath = (id) => "/api/v1/notices/" + encodeURIComponent(id);

  function triageText(id) {
    const t = S.triage.get(id);
    const parts = [];
    if (t && t.acked) parts.push(`Reconhecido por ${t.acked_name || t.acked_by}${t.acked_at ? " em " + fmtDateTime.format(new Date(t.acked_at)) : ""}`);
    else parts.push("Ainda não reconhecido");
    if (t && t.assignee) parts.push(`atribuído a ${t.assignee}` + (t.assigned_by && t.assigned_by !== t.assignee ? ` (por ${t.assigned_by})` : ""));
    else parts.push("sem fiscal responsável");
    return parts.join(" · ");
  }

  // A small labelled form; fields: [{name, label, type, required, value, min, max, placeholder, hint}].
  function stepForm(kind, fields, submitLabel, onSubmit, onCancel) {
    const f = h("form", { class: "step-form", "data-form": kind, novalidate: true });
    for (const x of fields) {
      if (x.type === "heading") { f.append(h("p", { class: "form-heading" }, x.label)); continue; }
      let input;
      if (x.type === "heading") continue;
      if (x.type === "textarea") input = h("textarea", { name: x.name, rows: x.rows || 2, placeholder: x.placeholder || "" });
      else if (x.type === "select") input = h("select", { name: x.name }, x.options.map((o) => h("option", { value: o.value }, o.label)));
      else input = h("input", { name: x.name, type: x.type || "text", required: !!x.required, min: x.min, max: x.max, placeholder: x.placeholder || "", autocomplete: "off", inputmode: x.type === "number" ? "numeric" : null });
      if (x.value !== undefined && x.value !== null) input.value = x.value;
      f.append(h("label", { "data-when": x.when || null }, h("span", {}, x.label + (x.required ? " *" : "")), input, x.hint ? h("small", { class: "muted" }, x.hint) : null));
    }
    // Fields shown only for a choice of a select: when = "name=value|value".
    const toggle = () => {
      for (const l of f.querySelectorAll("[data-when]")) {
        const [n, vals] = l.dataset.when.split("=");
        l.hidden = !vals.split("|").includes(f.elements[n].value);
      }
    };
    f.addEventListener("change", toggle);
    queueMicrotask(toggle);
    const err = h("p", { class: "error", role: "alert", hidden: true });
    f.append(err, h("div", { class: "actions" }, h("button", { type: "submit", "data-submit": kind }, submitLabel),
      onCancel ? h("button", { type: "button", class: "secondary", onclick: onCancel }, "Fechar") : null));
    f.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const values = {};
      for (const x of fields) {
        if (x.type === "heading") continue;
        const v = f.elements[x.name].value.trim();
        const shown = !f.elements[x.name].closest("label").hidden;
        if (x.required && shown && !v) { err.hidden = false; err.textContent = `Preencha: ${x.label}.`; f.elements[x.name].focus(); return; }
        values[x.name] = x.type === "number" ? (v === "" ? 0 : Number(v)) : v;
      }
      err.hidden = true;
      const btn = f.querySelector("[data-submit]");
      btn.disabled = true;
      try { await onSubmit(values); } catch (e) { err.hidden = false; err.textContent = e.message; } finally { btn.disabled = false; }
    });
    return f;
  }

  function alertsView() {
    const root = $("#view");
    const fiscal = S.me.role === "fiscal";
    const list = h("div", { class: "alerts", id: "alert-list" });
    const notifBtn = ("Notification" in window && Notification.permission === "default")
      ? h("button", { type: "button", class: "secondary", onclick: async () => { await Notification.requestPermission(); notifBtn.remove(); } }, "Ativar notificações do navegador") : null;
    fill(root, h("h1", {}, "Alertas"),
      h("div", { class: "toolbar" }, notifBtn, h("span", { class: "muted" }, fiscal ? "Novos alertas aparecem aqui na hora, com som." : "Somente fiscais podem agir sobre os alertas.")),
      window.sossegoNotify ? window.sossegoNotify.dutyLine() : null,
      S.alertsError ? h("p", { class: "banner" }, "Lista de alertas indisponível: " + S.alertsError) : null, list);
    S.unseen = 0;
    const items = new Map();
    const sel = (attr, id) => $(`[${attr}="${CSS.escape(id)}"]`, list);

    function summary(a) {
      const state = a.kind === "no_data" && a.state !== "resolved" ? "no_data" : a.state;
      return h("div", { class: "summary" },
        h("div", { class: "facts" }, h("span", { class: "state" }, ALERT_STATES[state] || state), h("span", {}, a.municipality || ""),
          h("span", {}, a.firing_at ? "desde " + fmtDateTime.format(new Date(a.firing_at)) : a.pending_at ? "desde " + fmtDateTime.format(new Date(a.pending_at)) : ""),
          a.screening ? h("span", { class: "grade screening" }, "medidor de triagem: indicativo") : null,
          // readings replayed after an outage: the alert is about the past and was known only later
          a.detected_at && a.firing_at && new Date(a.detected_at) - new Date(a.firing_at) > 120000 ?
            h("span", { class: "late", "data-late": "" }, "detectado " + fmtDateTime.format(new Date(a.detected_at)) + ", com atraso (leituras reenviadas pelo gateway)") : null,
          // the time of these readings is uncertain: no notice is drafted from them
          a.unsynced_records > 0 ? h("span", { class: "late", "data-unsynced": "" },
            `relógio do gateway não sincronizado em ${a.unsynced_records} leituras: não gera notificação`) : null),
        h("div", {}, h("a", { href: "#/sensor/" + encodeURIComponent(a.sensor) }, h("b", {}, a.sensor)), a.kind === "no_data" ? " — sem dados (" + (a.reason === "gateway_offline" ? "gateway offline" : "silencioso") + ")" :
          ` — ${db(a.laeq_db)} dB(A) para limite de ${db(a.limit_db)} dB(A) (${a.laeq_db > a.limit_db ? "+" : ""}${db(a.laeq_db - a.limit_db)} dB${a.margin_db ? `; margem de incerteza do medidor ${db(a.margin_db)} dB` : ""}), ${a.period_label || a.period || ""}`),
        a.article ? h("div", {}, h("b", {}, a.article), a.code_id ? ` — código ${a.code_id} (${a.code_version || ""})` : "") : null,
        a.quote ? h("div", { class: "quote" }, "“" + a.quote + "”") : null,
        a.establishment ? h("div", { class: "muted" }, "Estabelecimento: " + a.establishment) : null);
    }
    function item(a) {
      const el = h("article", { class: "alert " + a.state + (S.fresh && S.fresh.has(a.id) ? " new" : ""), "data-alert": a.id },
        summary(a),
        h("div", { class: "triage muted", "data-triage": a.id }, triageText(a.id)),
        window.sossegoCases ? window.sossegoCases.alertLine(a) : null, // cases.js: "Caso: … — prazo até …"
        fiscal ? actions(a) : null,
        h("div", { class: "assign-box", "data-assign": a.id, hidden: true }),
        h("div", { class: "result", "data-result": a.id, role: "status" }),
        window.sossegoNotify ? window.sossegoNotify.alertExtras(a) : null,
        window.sossegoCalibration ? window.sossegoCalibration.alertNote(a) : null,
        h("div", { class: "notice", "data-notice": a.id, hidden: true }));
      el.addEventListener("animationend", () => { el.classList.remove("new"); if (S.fresh) S.fresh.delete(a.id); });
      return el;
    }
    function say(id, text, cls = "") { const out = sel("data-result", id); if (out) { out.className = "result " + cls; out.textContent = text; } }
    async function run(id, fn, ok) {
      say(id, "enviando…", "muted");
      try { const msg = await fn(); say(id, msg || ok); } catch (e) { say(id, e.message, "error"); }
    }
    function refreshTriage(id) {
      const line = sel("data-triage", id);
      if (line) line.textContent = triageText(id);
      const ack = $(`[data-alert="${CSS.escape(id)}"] [data-action="ack"]`, list);
      if (ack) ack.disabled = !!(S.triage.get(id) || {}).acked;
    }
    function actions(a) {
      const t = S.triage.get(a.id) || {};
      const exceedance = a.kind !== "no_data";
      return h("div", { class: "actions" },
        h("button", { type: "button", "data-action": "ack", disabled: !!t.acked, onclick: () => run(a.id, async () => {
          const v = await api(`${alertPath(a.id)}/ack`, { method: "POST", body: {}, feature: "Reconhecer alertas" });
          S.triage.set(a.id, v); refreshTriage(a.id);
        }, "Alerta reconhecido.") }, "Reconhecer"),
        h("button", { type: "button", class: "secondary", "data-action": "assign", onclick: () => toggleAssign(a) }, "Atribuir"),
        exceedance ? h("button", { type: "button", class: "secondary", "data-action": "notice", onclick: () => run(a.id, () => openAlertDoc(a.id), "Documento aberto abaixo.") }, "Abrir documento") : null,
        exceedance ? h("button", { type: "button", class: "secondary", "data-action": "evidence", onclick: () => run(a.id, () => download(`${alertPath(a.id)}/evidence`, `evidencias-${a.id}.zip`, "O pacote de evidências"), "Pacote de evidências baixado.") }, "Baixar evidências") : null);
    }
    function toggleAssign(a) {
      const box = sel("data-assign", a.id);
      if (!box.hidden) { box.hidden = true; box.replaceChildren(); return; }
      const t = S.triage.get(a.id) || {};
      const who = S.assignees && S.assignees.length
        ? { name: "assignee", label: "Fiscal responsável", type: "select", options: S.assignees.map((u) => ({ value: u, label: u + (u === S.me.user ? " (eu)" : "") })), value: t.assignee || S.me.user }
        : { name: "assignee", label: "Usuário do fiscal responsável", required: true, value: t.assignee || S.me.user };
      box.replaceChildren(stepForm("assign", [who], "Atribuir", async (v) => {
        const res = await api(`${alertPath(a.id)}/assign`, { method: "POST", body: { assignee: v.assignee }, feature: "Atribuir alertas" });
        S.triage.set(a.id, res); refreshTriage(a.id);
        box.hidden = true; box.replaceChildren();
        say(a.id, `Alerta atribuído a ${res.assignee}.`);
      }, () => { box.hidden = true; box.replaceChildren(); }));
      box.hidden = false;
    }

    // The constatação: source, where the fiscal stood, when, what was heard,
    // and the measurement that confirms it (docs/workflow-api.md).
    function constatacaoForm(alertId, v, d, followsUp, done, onCancel) {
      const ests = v.establishments || [];
      const fs = [
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
        { name: "meter_grade", label: "Classe do medidor", type: "select", when: "kind=on_site", options: [{ value: "class1", label: "classe 1" }, { value: "class2", label: "classe 2" }] },
        { name: "meter_model", label: "Modelo do medidor", when: "kind=on_site", required: true },
        { name: "meter_serial", label: "Número de série", when: "kind=on_site", required: true },
        { name: "meter_calibrated_at", label: "Data da calibração", type: "date", when: "kind=on_site", required: true },
        { name: "meter_certificate", label: "Certificado de calibração", when: "kind=on_site" },
        { name: "laeq", label: "LAeq medido, dB(A)", when: "kind=on_site", required: true, placeholder: "67,5" },
        { name: "duration_min", label: "Duração da medição (minutos)", when: "kind=on_site", required: true, placeholder: "5" },
        { name: "residual", label: "Nível residual, dB(A) (se medido)", when: "kind=on_site" },
        { name: "evidence", label: "Evidência da declaração", type: "textarea", when: "kind=statement", required: true, placeholder: "fotos, vídeo, reclamações registradas" },
      ].filter(Boolean);
      return stepForm("constatacao", fs, "Registrar constatação", async (x) => {
        const body = { follows_up: followsUp || undefined, heard: x.heard, at: x.at + ":00-03:00",
          source: { kind: x.source }, position: { address: x.position_address, description: x.position_description || undefined },
          measurement: { kind: x.kind } };
        if (x.source === "establishment") body.source.establishment_id = x.establishment_id;
        if (x.source === "other") Object.assign(body.source, { name: x.other_name, document: x.other_document, address: x.other_address });
        if (x.lat || x.lon) { body.position.lat = num(x.lat); body.position.lon = num(x.lon); }
        if (x.kind === "sensor_window") body.measurement.source_attested = x.attested === "yes";
        if (x.kind === "on_site") Object.assign(body.measurement, { meter: { grade: x.meter_grade, model: x.meter_model, serial: x.meter_serial,
          calibrated_at: x.meter_calibrated_at, certificate: x.meter_certificate || undefined }, laeq_db: num(x.laeq),
          duration_s: Math.round((num(x.duration_min) || 0) * 60), residual_db: num(x.residual) === null ? undefined : num(x.residual) });
        if (x.kind === "statement") body.measurement.evidence = x.evidence;
        const k = await api(`${alertPath(alertId)}/constatacoes`, { method: "POST", body, feature: "Registrar constatação" });
        await done(k);
      }, onCancel);
    }

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

    // The alert's document: the stored one, or a fresh draft.
    async function openAlertDoc(alertId) {
      const v = await api(`${alertPath(alertId)}/notice`, { feature: "O documento do alerta" });
      renderDoc(alertId, v);
    }
    async function openDoc(alertId, docId) {
      const v = await api(docPath(docId), { feature: "O documento" });
      renderDoc(alertId, v);
    }
    function renderDoc(alertId, v) {
      const box = sel("data-notice", alertId);
      if (!box) return;
      S.notices.set(alertId, v);
      const d = v.draft || {};
      box.hidden = false;
      box.dataset.doc = v.stored ? v.id : "";
      box.dataset.state = v.state;
      const res = h("div", { class: "result", "data-doc-result": "", role: "status" });
      const formBox = h("div", { class: "form-box" });
      const sayDoc = (text, cls = "") => { res.className = "result " + cls; res.textContent = text; };
      const act = async (fn, ok) => {
        sayDoc("enviando…", "muted");
        try { const msg = await fn(); if (res.isConnected) sayDoc(msg || ok); else { const r2 = $("[data-doc-result]", sel("data-notice", alertId)); if (r2) { r2.className = "result"; r2.textContent = msg || ok; } } }
        catch (e) { sayDoc(e.message, "error"); }
      };
      const post = (path, body, feature) => api(path, { method: "POST", body, feature });
      const after = (out, msg) => { renderDoc(alertId, out.notice || out); const r2 = $("[data-doc-result]", sel("data-notice", alertId)); if (r2) { r2.className = "result"; r2.textContent = msg; } };
      const id = v.id;
      const step = (k, body) => post(`${docPath(id)}/${k}`, body, STEP_LABELS[k]);

      const prazoField = (d.fields || []).find((f) => f.id === "prazo");
      const needsPrazo = isNoticeKind(d.kind) && ((prazoField && prazoField.by_hand) || d.prazo_days_max > 0);
      // The signing fiscal is the logged-in user (name and matrícula from the user register).
      const signer = { type: "heading", label: "Assina o fiscal logado, com o nome completo e a matrícula do cadastro de usuários." };
      const closeForm = () => formBox.replaceChildren();
      const ks = v.alert_constatacoes || [];
      const followUps = ks.filter((k) => k.follows_up && k.follows_up === v.id);
      const forms = {
        issue: () => stepForm("issue", [signer,
          ...(needsPrazo ? [{ name: "prazo_days", label: "Prazo para regularização (dias)", type: "number", required: !!(prazoField && prazoField.by_hand), min: 1, max: d.prazo_days_max || null, value: v.prazo_days || null,
            hint: (prazoField ? prazoField.article + ": " + prazoField.label : "") + (d.prazo_days_max ? ` — no máximo ${d.prazo_days_max} dias` : "") }] : [])],
        "Emitir " + (d.title || "documento"), async (x) => {
          const body = {};
          if (needsPrazo) body.prazo_days = x.prazo_days;
          after(await step("issue", body), STEP_DONE.issue);
        }, closeForm),
        ciente: () => stepForm("ciente", [{ name: "signed_by", label: "Nome de quem apôs o ciente", required: true },
          { name: "declaration", label: "Declaração do fiscal (impressa no documento)", type: "textarea" },
          { name: "observation", label: "Observação", type: "textarea" }], "Registrar ciente",
          async (x) => after(await step("ciente", { signed_by: x.signed_by, declaration: x.declaration || undefined, observation: x.observation || undefined }), STEP_DONE.ciente), closeForm),
        recusa: () => {
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
            after(await step("recusa", body), STEP_DONE.recusa);
          }, closeForm);
        },
        regularize: () => stepForm("regularize", [{ name: "note", label: "Como a situação foi regularizada", type: "textarea" }], "Registrar regularização",
          async (x) => after(await step("regularize", x.note ? { note: x.note } : {}), STEP_DONE.regularize), closeForm),
        auto: () => v.state === "draft"
          ? stepForm("auto", [{ type: "heading", label: `Risco iminente (${d.not_when || ""}): o auto é lavrado sem ${d.title || "notificação"}.` }, signer], "Lavrar auto de infração",
            async () => { const out = await step("auto", { imminent_risk: true }); after(out, `Auto de infração ${out.auto ? out.auto.id : ""} lavrado.`); }, closeForm)
          : !isNoticeKind(d.kind)
            ? stepForm("auto", [{ type: "heading", label: "Lavrar o auto de infração com referência a este documento." }], "Lavrar auto de infração",
              async () => { const out = await step("auto", {}); after(out, `Auto de infração ${out.auto ? out.auto.id : ""} lavrado.`); }, closeForm)
            : stepForm("auto", [{ type: "heading", label: "O auto cita a constatação feita depois do prazo que mostra que a infração continuou." },
              followUps.length ? { name: "follow_up", label: "Constatação após o prazo", type: "select", options: followUps.map((k) => ({ value: k.id, label: `${k.id} — ${fmtDateTime.format(new Date(k.at))}, ${MEASUREMENTS[k.measurement.kind] || ""}` })), value: followUps[followUps.length - 1].id }
                : { type: "heading", label: "Nenhuma constatação após o prazo registrada: use “Registrar constatação após o prazo”." }], "Lavrar auto de infração",
              async (x) => { const out = await step("auto", x.follow_up ? { follow_up: x.follow_up } : {}); after(out, `Auto de infração ${out.auto ? out.auto.id : ""} lavrado.`); }, closeForm),
        edit: () => editForm(v, d, async (changes) => {
          const out = await api(docPath(id), { method: "PATCH", body: { changes }, feature: "Editar a minuta" });
          after(out, changes.length ? `Minuta alterada (${changes.length} ${changes.length === 1 ? "campo" : "campos"}).` : "Nada a alterar.");
        }, closeForm),
        correct: () => stepForm("correct", [{ type: "heading", label: `O ato emitido não se altera: a correção é um novo ato que cita ${v.id}.` },
          { name: "reason", label: "Motivo da correção (impresso no novo ato)", type: "textarea", required: true }], "Lavrar ato de correção", async (x) => {
          const out = await post(`${docPath(id)}/correct`, { reason: x.reason }, "Corrigir o ato");
          renderDoc(alertId, out.correction);
          const r2 = $("[data-doc-result]", sel("data-notice", alertId)); if (r2) { r2.className = "result"; r2.textContent = `Minuta de correção ${out.correction.id} criada: revise e emita.`; }
        }, closeForm),
        constatacao: () => constatacaoForm(alertId, v, d, v.stored && isNoticeKind(d.kind) && v.state !== "draft" ? v.id : "", async () => {
          if (v.stored) await openDoc(alertId, v.id); else await openAlertDoc(alertId);
          const r2 = $("[data-doc-result]", sel("data-notice", alertId)); if (r2) { r2.className = "result"; r2.textContent = STEP_DONE.constatacao; }
        }, closeForm),
        cancel: () => stepForm("cancel", [{ name: "note", label: "Motivo do descarte", type: "textarea" }], "Descartar minuta",
          async (x) => after(await step("cancel", x.note ? { note: x.note } : {}), STEP_DONE.cancel), closeForm),
        decide: () => stepForm("decide", [{ name: "punished", label: "Decisão", type: "select", options: [{ value: "true", label: "penalidade confirmada (autuado e punido)" }, { value: "false", label: "auto julgado improcedente" }] },
          { name: "note", label: "Fundamentação", type: "textarea" }], "Registrar julgamento",
          async (x) => after(await step("decide", { punished: x.punished === "true", note: x.note || undefined }), STEP_DONE.decide), closeForm),
      };
      const buttons = [];
      const openForm = (k) => { formBox.replaceChildren(forms[k]()); const first = formBox.querySelector("input, textarea, select"); if (first) first.focus(); };
      if (fiscal && (!v.stored || (isNoticeKind(d.kind) && ["acknowledged", "refused"].includes(v.state)))) {
        buttons.push(h("button", { type: "button", class: v.grounded ? "secondary" : "", "data-step": "constatacao", onclick: () => openForm("constatacao") },
          v.stored ? "Registrar constatação após o prazo" : "Registrar constatação"));
      }
      if (fiscal && v.stored && v.state === "draft") buttons.push(h("button", { type: "button", class: "secondary", "data-step": "edit", onclick: () => openForm("edit") }, STEP_LABELS.edit));
      if (fiscal && !v.stored && v.grounded) {
        buttons.push(h("button", { type: "button", "data-step": "store", onclick: () => act(async () => {
          const out = await post(`${alertPath(alertId)}/notice`, undefined, "Salvar a minuta");
          after(out, `Minuta salva como ${out.id}.`);
        }, "") }, "Salvar minuta"));
      }
      if (fiscal && v.stored) {
        for (const k of v.actions || []) {
          if (!forms[k]) continue;
          buttons.push(h("button", { type: "button", class: k === "cancel" ? "secondary" : "", "data-step": k, onclick: () => openForm(k) }, STEP_LABELS[k]));
        }
      }
      if (fiscal && v.stored && !["draft", "cancelled"].includes(v.state) && !v.corrected_by) buttons.push(h("button", { type: "button", class: "secondary", "data-step": "correct", onclick: () => openForm("correct") }, "Corrigir ato"));
      for (const other of [v.corrected_by, d.corrects && d.corrects.id].filter(Boolean)) buttons.push(h("button", { type: "button", class: "secondary", "data-open-doc": other, onclick: () => act(() => openDoc(alertId, other), "") }, "Abrir " + other));
      if (v.stored) buttons.push(h("button", { type: "button", class: "secondary", "data-step": "pdf", onclick: () => act(() => download(`${docPath(id)}/pdf`, `${id}.pdf`, "O PDF do documento"), "PDF baixado.") }, "Baixar PDF"));
      for (const kid of v.children || []) buttons.push(h("button", { type: "button", class: "secondary", "data-open-doc": kid, onclick: () => act(() => openDoc(alertId, kid), "") }, "Abrir " + kid));
      if (d.refers_to && d.refers_to.id) buttons.push(h("button", { type: "button", class: "secondary", "data-open-doc": d.refers_to.id, onclick: () => act(() => openDoc(alertId, d.refers_to.id), "") }, "Abrir " + d.refers_to.id));

      const pen = d.penalty || {}, nc = d.on_non_compliance;
      const field = (f) => {
        const pending = f.pending || (f.by_hand && !f.value);
        return [h("dt", {}, f.label, f.article ? h("span", { class: "art" }, ` (${f.article})`) : null),
          h("dd", { class: pending ? "byhand" : "", "data-field-id": f.id }, pending ? "a preencher pelo fiscal" : f.value)];
      };
      const people = [];
      if (v.agent) people.push(`Agente fiscal: ${v.agent.name}, matrícula ${v.agent.matricula}`);
      if (v.issued_at) people.push("Emitido em " + fmtDateTime.format(new Date(v.issued_at)));
      if (v.signed_by) people.push(`Ciente de ${v.signed_by}` + (v.ciencia_at ? " em " + fmtDateTime.format(new Date(v.ciencia_at)) : ""));
      if (v.witnesses && v.witnesses.length) people.push(`Recusa${v.ciencia_at ? " em " + fmtDateTime.format(new Date(v.ciencia_at)) : ""}; testemunhas: ` + v.witnesses.map(witnessText).join("; "));
      if (v.declaration) people.push("Declaração do fiscal: " + v.declaration);
      if (v.observation) people.push("Observação: " + v.observation);
      if (v.pdf) people.push(`PDF armazenado (${v.pdf.stage === "issue" ? "como emitido" : "com a " + v.pdf.stage}): SHA-256 ${v.pdf.sha256.slice(0, 16)}…`);
      if (v.escalated_to) people.push("Auto de infração: " + v.escalated_to);
      const dls = v.deadlines || [];
      fill(box,
        h("h3", {}, `${d.title || "Documento"}${v.id ? " nº " + v.id : ""} — `, h("span", { "data-doc-state": v.state }, v.state_label || v.state)),
        v.stored ? null : h("p", { class: "banner" }, "Minuta preparada pelo sistema, ainda não salva: salve-a para numerar, emitir e gerar o PDF."),
        v.why ? h("p", { class: "banner", "data-why": "" }, v.why) : null,
        ks.length ? h("div", { class: "constatacoes", "data-constatacoes": "" }, h("h4", {}, "Constatações"),
          h("ul", {}, ks.map((k) => h("li", { "data-constatacao": k.id, class: k.grounds ? "" : "muted" },
            h("b", {}, k.id), ` — ${fmtDateTime.format(new Date(k.at))}, ${MEASUREMENTS[k.measurement.kind] || k.measurement.kind}`,
            k.follows_up ? ` (após o prazo de ${k.follows_up})` : "",
            k.source.kind === "unidentified" ? ", fonte não identificada" : `, fonte: ${k.source.name || ""}`,
            h("div", { class: k.grounds ? "ok" : "error" }, k.grounds ? "sustenta o documento" : "não sustenta: " + k.why))))) : null,
        h("p", { class: "muted" }, [d.article, d.code_title, d.code_version ? "versão " + d.code_version : "", d.department].filter(Boolean).join(" — ")),
        d.refers_to ? h("p", {}, `Refere-se a ${d.refers_to.title || ""} ${d.refers_to.id}`) : null,
        d.corrects ? h("p", { "data-corrects": "" }, `Corrige ${d.corrects.title || ""} ${d.corrects.id}`) : null,
        v.corrected_by ? h("p", { class: "banner", "data-corrected-by": "" }, `Ato corrigido por ${v.corrected_by}: os próximos passos seguem no novo ato.`) : null,
        h("dl", { class: "fields" }, (d.fields || []).flatMap(field)),
        h("h4", {}, "Penalidade"),
        h("p", { "data-penalty": "" }, pen.text || "—"),
        nc ? h("p", {}, h("b", {}, "Se não regularizar no prazo: "), nc.text) : null,
        (nc && nc.appeal_note) || pen.appeal_note ? h("p", { class: "muted" }, (nc && nc.appeal_note) || pen.appeal_note) : null,
        people.length ? h("ul", { class: "people" }, people.map((p) => h("li", {}, p))) : null,
        h("h4", {}, "Prazos"),
        dls.length ? h("div", { class: "table-wrap" }, h("table", { class: "deadlines", "data-deadlines": "" },
          h("thead", {}, h("tr", {}, h("th", {}, "prazo"), h("th", {}, "dias"), h("th", {}, "último dia"), h("th", {}, "situação"))),
          h("tbody", {}, dls.map((x) => h("tr", { "data-deadline": x.id },
            h("td", {}, x.label, x.article ? h("span", { class: "art" }, ` (${x.article})`) : null, x.note ? h("div", { class: "muted" }, x.note) : null),
            h("td", {}, x.days ? `${x.days}${x.business_days ? " úteis" : ""}` : "—"),
            h("td", {}, x.last_day || "—"),
            h("td", { class: "dl-" + x.status }, DEADLINE_STATUS[x.status] || x.status))))))
          : h("p", { class: "muted" }, "Nenhum prazo corre a partir deste documento."),
        (d.notes || []).length ? h("ul", { class: "notes muted" }, d.notes.map((n) => h("li", {}, n))) : null,
        (v.edits || []).length ? h("details", { class: "edits", "data-edits": "" }, h("summary", {}, `Alterações da minuta (${v.edits.length})`),
          h("ul", {}, v.edits.map((e) => h("li", {}, `${fmtDateTime.format(new Date(e.at))} — ${e.actor.name}: ${EDIT_LABELS[e.field] || e.field.replace("field.", "campo ")}: “${e.before || "—"}” → “${e.after}”`)))) : null,
        fiscal && v.stored && !(v.actions || []).length ? h("p", { class: "muted" }, "Nenhuma ação cabe agora neste documento.") : null,
        h("div", { class: "actions" }, buttons),
        formBox, res);
    }

    function render() {
      const all = [...S.alerts.values()].sort((a, b) => (b.firing_at || b.pending_at || "").localeCompare(a.firing_at || a.pending_at || ""));
      items.clear();
      list.replaceChildren(...(all.length ? all.map((a) => { const el = item(a); items.set(a.id, el); return el; }) : [h("p", { class: "muted" }, "Nenhum alerta aberto.")]));
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
        const el = item(cur);
        if (items.size === 0) render(); else { list.prepend(el); items.set(a.id, el); }
      },
      caseUpdate(c) {
        if (!c.alert_id) return;
        refreshTriage(c.alert_id);
        // Another fiscal changed the document on screen: show the new state.
        const box = sel("data-notice", c.alert_id);
        if (box && !box.hidden && c.by !== S.me.user && c.notice_id) {
          const shown = box.dataset.doc;
          if (!shown || shown === c.notice_id) openDoc(c.alert_id, c.notice_id).catch((e) => say(c.alert_id, e.message, "error"));
        }
      },
    };
  }

  async function download(path, name, feature) {
    const resp = await api(path, { raw: true, feature });
    const blob = await resp.blob();
    const cd = resp.headers.get("Content-Disposition") || "";
    const m = cd.match(/filename="?([^";]+)"?/);
    const a = h("a", { href: URL.createObjectURL(blob), download: m ? m[1] : name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }

  // ---- vocabulary labels --------------------------------------------------
  // pt-BR labels of zones, sources, days, … from GET /api/v1/labels (codes.Labels),
  // so an enum value never reaches the user; without them, underscores become spaces.
  async function loadLabels() {
    try { S.labels = await api("/api/v1/labels", { feature: "Os rótulos do vocabulário" }); } catch (e) { S.labels = null; }
  }
  const label = (kind, v) => (S.labels && S.labels[kind] && S.labels[kind][v]) || String(v === undefined || v === null ? "" : v).replaceAll("_", " ");
  const labels = (kind, vs) => vs.map((v) => label(kind, v)).join(", ");

  // ---- municipal codes ----------------------------------------------------
  const days = (d) => d && d.length ? " (" + labels("day", d) + ")" : "";
  function codesView(id) {
    const root = $("#view");
    const sel = h("select", { id: "code-select", "aria-label": "Código municipal", onchange: () => { location.hash = "#/codigos/" + encodeURIComponent(sel.value); } });
    const body = h("div");
    root.replaceChildren(h("h1", {}, "Códigos de Posturas"), h("div", { class: "toolbar" }, h("label", {}, "Município ", sel)), body);
    (async () => {
      try {
        S.codes = S.codes || await api("/api/v1/codes", { feature: "A consulta aos códigos" });
        sel.replaceChildren(...S.codes.map((c) => h("option", { value: c.id }, `${c.municipality}/${c.state}${c.in_force ? "" : " (revogado)"}`)));
        const want = id || (S.filter && (S.codes.find((c) => c.municipality === S.filter) || {}).id) || (S.codes[0] && S.codes[0].id);
        if (!want) { body.replaceChildren(h("p", { class: "muted" }, "Nenhum código carregado.")); return; }
        sel.value = want;
        renderCode(body, await codeView(want));
      } catch (e) { body.replaceChildren(h("p", { class: "error" }, e.message)); }
    })();
    return {};
  }
  function renderCode(body, c) {
    const zoneLabel = Object.fromEntries((c.zones || []).map((z) => [z.id, z.label || label("zone", z.id)]));
    const periods = [];
    const key = (r) => `${r.period ? label("period", r.period) : ""} ${r.window ? r.window.from + "–" + r.window.to + days(r.window.days) : "24 h"}`;
    for (const r of c.limits) if (!periods.includes(key(r))) periods.push(key(r));
    const zones = [...new Set(c.limits.flatMap((r) => r.zones && r.zones.length ? r.zones : ["*"]))];
    const cell = (z, p) => c.limits.filter((r) => key(r) === p && ((r.zones && r.zones.length ? r.zones : ["*"]).includes(z)));
    const limits = c.limits.length ? h("div", { class: "table-wrap" }, h("table", { id: "limits" },
      h("thead", {}, h("tr", {}, h("th", {}, "zona"), periods.map((p) => h("th", {}, p)))),
      h("tbody", {}, zones.map((z) => h("tr", {}, h("th", {}, z === "*" ? "todas as zonas" : (zoneLabel[z] || label("zone", z))),
        periods.map((p) => h("td", {}, cell(z, p).map((r) => h("div", { title: r.quote }, h("b", {}, db(r.limit_db) + " dB(A)"), " ", r.article)))))))))
      : h("p", { class: "muted" }, "Este código não fixa limite numérico em decibéis.");
    const rules = c.rules.filter((r) => r.kind !== "out_of_scope");
    fill(body,
      h("p", {}, h("b", {}, c.title), " — ", c.law_title, " — versão ", c.version, c.in_force ? "" : h("span", { class: "error" }, ` — REVOGADO por ${c.revoked_by}`)),
      h("h2", {}, "Limites de nível (LAeq; infração só acima do limite)"), limits,
      h("h2", {}, "Horários, proibições e demais regras"),
      rules.length ? h("div", { class: "table-wrap" }, h("table", { id: "rules" },
        h("thead", {}, h("tr", {}, h("th", {}, "regra"), h("th", {}, "tipo"), h("th", {}, "quando / onde"), h("th", {}, "artigo"))),
        h("tbody", {}, rules.map((r) => h("tr", {},
          h("td", {}, r.label || r.id, h("details", {}, h("summary", {}, "texto"), h("div", { class: "quote" }, r.quote))),
          h("td", {}, label("rule_kind", r.kind)),
          h("td", {}, describe(r, zoneLabel)),
          h("td", {}, r.article))))))
        : h("p", { class: "muted" }, "Nenhuma regra de horário."),
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

  boot();
})();
