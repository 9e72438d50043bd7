// Small DOM helpers for the playground. Everything that comes from the server goes into
// the page as text (text nodes, element properties), never as HTML: a ticket's text is
// customer input, and a player can write markup into a ServiceBench record.

const ATTRIBUTES = new Set(["for", "role", "scope", "colspan"]);

/** An element with properties (or attributes: aria-*, data-*, for, role) and children. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "innerHTML" || key === "outerHTML") throw new Error("text only");
    if (key === "class") node.className = value;
    else if (ATTRIBUTES.has(key) || key.startsWith("aria-") || key.startsWith("data-")) {
      node.setAttribute(key, value === true ? "true" : String(value));
    } else node[key] = value;
  }
  append(node, children);
  return node;
}

/** Append children; strings become text nodes. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Replace a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

export function score(value) {
  return Number(value ?? 0).toFixed(3);
}

export function reward(value) {
  const number = Number(value ?? 0);
  return (number < 0 ? "\u2212" : "+") + Math.abs(number).toFixed(3);
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

export function yesNo(flag) {
  return flag ? "yes" : "no";
}

/** A table with column headers; each row is a list of cells (text or nodes). */
export function table(caption, headers, rows) {
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      {},
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, cell))))),
    ),
  );
}

/** A list of short codes (signals, facts), or a dash when empty. */
export function codes(items, empty = "none") {
  if (!items || items.length === 0) return el("span", { class: "muted" }, empty);
  return el("ul", { class: "codes" }, items.map((item) => el("li", {}, el("code", {}, item))));
}

/** A labelled form field: label, control, and an optional hint the control is described by. */
export function field(id, label, control, hint) {
  control.id = id;
  const parts = [el("label", { for: id }, label), control];
  if (hint) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    parts.push(el("p", { class: "hint", id: hintId }, hint));
  }
  return el("div", { class: "field" }, parts);
}

/** A <select> of values, with a first empty choice when `placeholder` is given. */
export function select(values, placeholder) {
  const node = el("select", {});
  if (placeholder !== undefined) node.append(el("option", { value: "" }, placeholder));
  for (const value of values) node.append(el("option", { value: String(value) }, String(value)));
  return node;
}
