// Shared helpers of every page of the dashboard: DOM building, pt-BR
// formatting in Brasília time, the JSON API client, toasts, the banner and
// downloads. No state of its own but the session's CSRF token and what to
// do when the session ends (set by app.js).

export const TZ = "America/Sao_Paulo";

export const $ = (sel, el = document) => el.querySelector(sel);

// h("div", {class, text, onclick, attr…}, ...kids): an element; null,
// undefined and false attributes and children are left out.
export function h(tag, attrs = {}, ...kids) {
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
}

// replaceChildren, leaving out null/undefined/false (conditional parts).
export const fill = (el, ...kids) => el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false));

// ---- formatting (pt-BR, Brasília time) -------------------------------------
const fmt = (o) => new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, hour12: false, ...o });
export const fmtTime = fmt({ hour: "2-digit", minute: "2-digit", second: "2-digit" });
export const fmtHM = fmt({ hour: "2-digit", minute: "2-digit" });
export const fmtDate = fmt({ day: "2-digit", month: "2-digit", year: "numeric" });
export const fmtDateTime = fmt({ day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit" });
// A decibel figure with one decimal, "—" when unknown.
export const db = (v) => (v === null || v === undefined || Number.isNaN(v)) ? "—" : Number(v).toLocaleString("pt-BR", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
// A number with d decimals, "—" when unknown.
export const num = (v, d = 1) => v === undefined || v === null ? "—" : Number(v).toLocaleString("pt-BR", { minimumFractionDigits: d, maximumFractionDigits: d });
// "2026-12-02" → "02/12/2026".
export const dateBR = (iso) => iso ? iso.split("-").reverse().join("/") : "";
export const ROLES = { operador: "operador", fiscal: "fiscal", admin: "administrador" };

// ---- API -------------------------------------------------------------------
export class ApiError extends Error {
  constructor(status, msg, missing) { super(msg); this.status = status; this.missing = missing; }
}

// The signed-in session as the API client needs it.
export const session = {
  csrf: "", // the X-CSRF-Token of non-GET requests
  lost: () => {}, // called on a 401 outside login: the session ended
};

// api(path, {method, body, feature, raw}): the JSON answer, or an ApiError
// with the server's pt-BR message. feature names the function for a route
// this server lacks ("… ainda não está disponível neste servidor").
export async function api(path, opts = {}) {
  const init = { method: opts.method || "GET", credentials: "same-origin", headers: {} };
  if (init.method !== "GET") {
    if (session.csrf) init.headers["X-CSRF-Token"] = session.csrf;
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
    if (resp.status === 401 && path !== "/api/v1/login" && path !== "/api/v1/me") session.lost("Sua sessão terminou. Entre novamente.");
    throw new ApiError(resp.status, missing ? `${opts.feature || "Esta função"} ainda não está disponível neste servidor (${init.method} ${path.split("?")[0]}).` : msg, missing);
  }
  return data;
}

// download saves the file at path under the server's name (or name).
export async function download(path, name, feature) {
  const resp = await api(path, { raw: true, feature });
  const blob = await resp.blob();
  const cd = resp.headers.get("Content-Disposition") || "";
  const m = cd.match(/filename="?([^";]+)"?/);
  const a = h("a", { href: URL.createObjectURL(blob), download: m ? m[1] : name });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// ---- messages --------------------------------------------------------------
export function toast(text, cls = "") {
  const el = h("div", { class: "toast " + cls, role: "status" }, text);
  $("#toasts").append(el);
  setTimeout(() => el.remove(), 6000);
}

export function banner(text) {
  const b = $("#banner");
  b.hidden = !text; b.textContent = text || "";
}
