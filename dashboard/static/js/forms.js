// The small labelled forms of the fiscal's workflow steps, and the labelled field the admin forms share.
import { h } from "./lib.js";

function input(x) {
  if (x.type === "textarea") return h("textarea", { name: x.name, rows: x.rows || 2, placeholder: x.placeholder || "" });
  if (x.type === "select") return h("select", { name: x.name }, x.options.map((o) => h("option", { value: o.value }, o.label)));
  return h("input", { name: x.name, type: x.type || "text", required: !!x.required, min: x.min, max: x.max, placeholder: x.placeholder || "", autocomplete: "off", inputmode: x.type === "number" ? "numeric" : null });
}

// Fields shown only for a choice of a select: when = "name=value|value".
function toggleShown(f) {
  for (const l of f.querySelectorAll("[data-when]")) {
    const [n, vals] = l.dataset.when.split("=");
    l.hidden = !vals.split("|").includes(f.elements[n].value);
  }
}

// stepForm(kind, fields, submitLabel, onSubmit, onCancel): fields are
// [{name, label, type, required, value, min, max, placeholder, hint, when}]
// or {type: "heading", label}; onSubmit gets {name: value} (numbers for
// type number) and its error is shown in the form.
export function stepForm(kind, fields, submitLabel, onSubmit, onCancel) {
  const f = h("form", { class: "step-form", "data-form": kind, novalidate: true });
  for (const x of fields) {
    if (x.type === "heading") { f.append(h("p", { class: "form-heading" }, x.label)); continue; }
    const el = input(x);
    if (x.value !== undefined && x.value !== null) el.value = x.value;
    f.append(h("label", { "data-when": x.when || null }, h("span", {}, x.label + (x.required ? " *" : "")), el, x.hint ? h("small", { class: "muted" }, x.hint) : null));
  }
  f.addEventListener("change", () => toggleShown(f));
  queueMicrotask(() => toggleShown(f));
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

// field: a label around its input, with an optional hint under it.
export function field(label, input, hint) {
  return h("label", {}, label, input, hint ? h("span", { class: "muted hint" }, hint) : null);
}
