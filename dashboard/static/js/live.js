// The overview (#/): one card per sensor with its live value against the
// limit in force, its data age, gateway and clock; filtered by
// municipality.
import { $, db, fmtDateTime, fmtTime, h } from "./lib.js";
import { S, gatewayOf, municipalityName, sensor } from "./state.js";
import { GRADES, ageClass, clockText, freshness, limitText, marginClass, marginText, periodText, serverNow } from "./levels.js";

function gatewayText(g) {
  if (!g) return "gateway desconhecido";
  return `gateway ${g.gateway} ${g.state === "online" ? "online" : g.state === "offline" ? "offline" : "sem status"}`;
}

function readingTime(l) {
  if (!l) return h("span", {}, "sem leituras");
  const t = new Date(l.t);
  return h("span", { title: "hora da última leitura" }, serverNow() - t < 12 * 3600e3 ? "às " + fmtTime.format(t) : "em " + fmtDateTime.format(t));
}

// card is one sensor's card, drawn anew on every change.
function card(s) {
  const l = s.level;
  const g = gatewayOf(s);
  const f = freshness(s);
  const cls = f.state === "live" ? marginClass(l) : "none"; // colours mean "now"
  const grade = s.grade || (l && l.grade);
  return h("a", { class: "card " + cls + " " + ageClass(f), href: "#/sensor/" + encodeURIComponent(s.id), "data-sensor": s.id, "data-age": f.state },
    h("div", { class: "head" }, h("span", { class: "id" }, s.id), h("span", { class: "muted" }, municipalityName(s.municipality, s.code))),
    s.address ? h("div", { class: "addr" }, s.address) : null,
    (s.establishments || []).length ? h("div", { class: "est", "data-field": "establishments" }, s.establishments.map((e) => e.name).join("; ")) : null,
    h("div", { class: "level" },
      h("span", { class: "value", "data-field": "laeq" }, l ? db(l.laeq_db) : "—"), h("span", {}, "dB(A)"),
      h("span", { class: "margin " + cls, "data-field": "margin" }, marginText(l))),
    h("div", { class: "age " + ageClass(f), "data-field": "age" }, f.text),
    h("div", { class: "facts" },
      limitText(l) ? h("span", {}, limitText(l)) : null, // without one, the margin's badge says so
      h("span", {}, periodText(l)),
      h("span", {}, l ? "LAFmax " + db(l.lafmax_db) : "")),
    h("div", { class: "facts" },
      h("span", {}, h("span", { class: "dot " + (g ? g.state : "") }), gatewayText(g)),
      h("span", {}, clockText(s)),
      grade ? h("span", { class: "grade " + grade }, GRADES[grade] || grade) : null,
      readingTime(l)));
}

export function overviewView() {
  const root = $("#view");
  const cards = new Map();
  const municipalities = () => [...new Set([...S.sensors.values()].map((s) => s.municipality).filter(Boolean))].sort();
  const select = h("select", { id: "filter", "aria-label": "Filtrar por município", onchange: () => { S.filter = select.value; localStorage.setItem("sossego.filter", S.filter); render(); } });
  const count = h("span", { class: "muted" });
  const grid = h("div", { class: "grid", id: "sensors" });
  root.replaceChildren(h("h1", {}, "Sensores ao vivo"), h("div", { class: "toolbar" }, h("label", {}, "Município ", select), count), grid);

  function fillSelect() {
    const opts = [h("option", { value: "" }, "todos")].concat(municipalities().map((m) => h("option", { value: m }, municipalityName(m))));
    select.replaceChildren(...opts);
    select.value = S.filter;
    if (select.value !== S.filter) { S.filter = ""; select.value = ""; }
  }
  const redraw = (id) => { const old = cards.get(id); if (old) { const c = card(sensor(id)); old.replaceWith(c); cards.set(id, c); } };
  // Ages move without data: every second each card is redrawn.
  const ageTimer = setInterval(() => {
    if (S.view !== view) { clearInterval(ageTimer); return; }
    for (const id of [...cards.keys()]) redraw(id);
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
      for (const id of new Set(changed)) redraw(id);
    },
  };
  return view;
}
