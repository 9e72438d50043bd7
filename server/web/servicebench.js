// ServiceBench in the playground: a call composed from the catalogue the observation
// carries (available_endpoints), the API response and reward signals of each call, the
// call history and, at the end, the end-state outcome with any collateral damage.
import { codes, el, field, fill, pretty, reward, score as fmt, select, table, yesNo } from "./dom.js";

export function score(observation) {
  return observation.cumulative_reward;
}

export function ending(observation) {
  return observation.task_completed ? "task completed" : "step budget spent, task not completed";
}

// ------------------------------------------------------------------ the call form

function bounds(spec) {
  const parts = [];
  if (spec.minimum !== undefined) parts.push(`at least ${spec.minimum}`);
  if (spec.maximum !== undefined) parts.push(`at most ${spec.maximum}`);
  if (spec.default !== undefined) parts.push(`default ${JSON.stringify(spec.default)}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

function control(spec) {
  if (Array.isArray(spec.enum)) return select(spec.enum, spec.required ? "Choose\u2026" : "(not sent)");
  switch (spec.type) {
    case "integer":
    case "number":
      return el("input", {
        type: "number",
        step: spec.type === "integer" ? "1" : "any",
        min: spec.minimum ?? "",
        max: spec.maximum ?? "",
        inputMode: spec.type === "integer" ? "numeric" : "decimal",
      });
    case "boolean":
      return select(["true", "false"], spec.required ? "Choose\u2026" : "(not sent)");
    case "object":
    case "array":
      return el("textarea", {
        rows: 3,
        spellcheck: false,
        placeholder: spec.type === "object" ? '{"notes": "\u2026"}' : "[\u2026]",
      });
    default:
      return el("input", { type: "text", autocomplete: "off", spellcheck: false });
  }
}

/** An object parameter's own fields, when the catalogue names them (`properties`, or `fields`:
 * names of string fields); otherwise null, and the object is typed as JSON. */
function members(spec) {
  if (spec.type !== "object") return null;
  if (spec.properties) return spec.properties;
  if (Array.isArray(spec.fields)) {
    return Object.fromEntries(spec.fields.map((name) => [name, { type: "string", required: false }]));
  }
  return null;
}

/** One field per parameter; a fieldset for an object parameter whose fields are named. */
function paramFields(name, spec, prefix = "param") {
  const id = `${prefix}-${name}`;
  const label = `${name}${spec.required ? " (required)" : ""}`;
  const fields = members(spec);
  if (fields) {
    return el(
      "fieldset",
      { class: "nested" },
      el("legend", {}, label),
      spec.description ? el("p", { class: "hint" }, spec.description) : null,
      Object.entries(fields).map(([key, sub]) => paramFields(key, sub, id)),
    );
  }
  const input = control(spec);
  input.name = name;
  input.required = Boolean(spec.required);
  const kind = spec.type === "object" ? "object, as JSON" : spec.type || "string";
  return field(id, label, input, `${spec.description || ""} [${kind}]${bounds(spec)}`.trim());
}

/** The parameters as the API takes them; null (and the field flagged) when one cannot be read. */
function readParams(specs, prefix = "param") {
  const params = {};
  for (const [name, spec] of Object.entries(specs)) {
    const id = `${prefix}-${name}`;
    const fields = members(spec);
    if (fields) {
      const nested = readParams(fields, id);
      if (nested === null) return null;
      if (Object.keys(nested).length || spec.required) params[name] = nested;
      continue;
    }
    const input = document.getElementById(id);
    input.setCustomValidity("");
    const raw = input.value;
    if (raw === "") continue;
    if (spec.type === "integer" || spec.type === "number") params[name] = Number(raw);
    else if (spec.type === "boolean") params[name] = raw === "true";
    else if (spec.type === "object" || spec.type === "array") {
      try {
        params[name] = JSON.parse(raw);
      } catch (error) {
        input.setCustomValidity(`Not valid JSON: ${error.message}`);
        input.reportValidity();
        return null;
      }
    } else params[name] = raw;
  }
  return params;
}

export function mount(panel, observation, submit) {
  const endpoints = observation.available_endpoints;
  const picker = el("select", { name: "endpoint" });
  for (const service of new Set(endpoints.map((e) => e.service))) {
    picker.append(
      el(
        "optgroup",
        { label: service },
        endpoints.map((e, i) =>
          e.service === service ? el("option", { value: String(i) }, `${e.method} ${e.endpoint}`) : null,
        ),
      ),
    );
  }
  const route = el("p", { class: "route" });
  const params = el("fieldset", { class: "params" });
  const chosen = () => endpoints[Number(picker.value)];
  const show = () => {
    const e = chosen();
    fill(route, "Service ", el("code", {}, e.service), ", method ", el("code", {}, e.method), ": ", e.description);
    const names = Object.entries(e.params);
    fill(
      params,
      el("legend", {}, "Parameters"),
      names.length ? names.map(([name, spec]) => paramFields(name, spec)) : el("p", { class: "muted" }, "None."),
    );
  };
  picker.addEventListener("change", show);
  const form = el(
    "form",
    { id: "call-form", "aria-labelledby": "action-title" },
    field("endpoint", "Endpoint", picker),
    route,
    params,
    el("button", { type: "submit", id: "send-call" }, "Send call"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const e = chosen();
    const values = readParams(e.params);
    if (values !== null) submit({ service: e.service, endpoint: e.endpoint, method: e.method, params: values });
  });
  fill(
    panel,
    el("h3", { id: "action-title" }, "Call an endpoint"),
    el("p", { class: "task" }, observation.task_description),
    observation.policy
      ? el(
          "details",
          { id: "policy" },
          el("summary", {}, "Support policy (the resolution must follow it)"),
          el("div", { class: "instructions" }, observation.policy),
        )
      : null,
    form,
  );
  show();
}

export function next() {
  // The form keeps the last call, so the next one can start from it.
}

// ------------------------------------------------------------------ what a call returned

export function result(container, stepResult) {
  const observation = stepResult.observation;
  const response = observation.api_response || {};
  const signals = (observation.info || {}).reward_signals || [];
  fill(
    container,
    el("h3", {}, "Last call"),
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "Reward"),
      el("dd", { id: "last-reward" }, reward(stepResult.reward)),
      el("dt", {}, "Reward signals"),
      el("dd", { id: "last-signals" }, codes(signals)),
      el("dt", {}, "Status"),
      el("dd", { id: "last-status" }, `${response.status_code ?? "?"} ${observation.success ? "success" : "failed"}`),
      observation.error_message ? [el("dt", {}, "Error"), el("dd", {}, observation.error_message)] : null,
    ),
    el("h4", {}, "api_response"),
    el("pre", { class: "json", id: "api-response", tabIndex: 0 }, pretty(response)),
  );
}

export function history(container, state) {
  const rows = state.call_history.map((call) => [
    String(call.step),
    el("code", {}, `${call.method} ${call.endpoint}`),
    el("code", { class: "params" }, JSON.stringify(call.params)),
    String(call.status_code),
    reward(call.reward),
    codes(call.signals),
  ]);
  fill(container, table("Every call so far (from /state)", ["Step", "Call", "Parameters", "Status", "Reward", "Signals"], rows));
}

// ------------------------------------------------------------------ the end state

function changes(caption, list, empty) {
  if (!list.length) return el("p", { class: "muted" }, empty);
  return table(
    caption,
    ["Table", "Record", "Field", "Before", "After"],
    list.map((c) => [c.table, c.key, c.field, el("code", { class: "value" }, JSON.stringify(c.before)), el("code", { class: "value" }, JSON.stringify(c.after))]),
  );
}

export function outcome(container, state) {
  const end = state.outcome;
  fill(
    container,
    el("h3", { id: "outcome-title", tabIndex: -1 }, "Outcome"),
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "Final score"),
      el("dd", { id: "final-score" }, fmt(state.cumulative_reward)),
      el("dt", {}, "Task completed"),
      el("dd", { id: "task-completed" }, yesNo(state.task_completed)),
      el("dt", {}, "End state matches the task's"),
      el("dd", { id: "end-state-matches" }, yesNo(end.end_state_matches)),
      el("dt", {}, "Milestones"),
      el("dd", {}, codes(state.milestones)),
      el("dt", {}, "Penalties not repaid"),
      el("dd", {}, fmt(state.penalty_balance)),
    ),
    end.checks.length
      ? table(
          "Checks of the intended writes",
          ["Check", "Record", "Expected", "Actual", "Met"],
          end.checks.map((c) => [c.name, c.record, el("code", { class: "value" }, JSON.stringify(c.expected)), el("code", { class: "value" }, JSON.stringify(c.actual)), yesNo(c.met)]),
        )
      : null,
    el("h4", {}, "Intended changes"),
    changes("The writes the task asked for", end.intended_changes, "None (the task writes nothing, or it was not done)."),
    el("h4", {}, "Collateral damage"),
    el("div", { id: "collateral" }, changes("Every other change to the world", end.collateral_damage, "None: nothing else in the world changed.")),
  );
}
