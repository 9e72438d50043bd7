// Support Queue in the playground: the shown ticket, the triage form built from the values
// the observation allows, the grading of each ticket (last_feedback), the history and the
// final score. Ticket texts are customer input and are only ever shown as text.
import { codes, el, field, fill, reward, score as fmt, select, table } from "./dom.js";

const LABELS = ["priority", "queue", "disposition"];
const TEXTS = ["summary", "response"];

export function score(observation) {
  return (observation.info || {}).average_reward ?? 0;
}

export function ending(observation) {
  return `all ${observation.total_tickets} tickets triaged`;
}

const COUNT_DELAY_MS = 250; // after typing stops, so a word count is asked once per pause

/**
 * The live "n / cap words" of a text box, counted by the server's grader itself
 * (POST /support_queue/word_count): the grader canonicalises a text before counting
 * (invisible characters, look-alike letters, spaced-out letters), which no count of the
 * page's own would match. Only the answer for the latest text is shown; until it comes the
 * hint says it is counting, and if it fails, that the count is unavailable: never a number
 * the grader would not give. Over the cap, a warning (read out at once by screen readers) says the
 * text will earn nothing, before it is submitted.
 */
function wordCounter(name, control, hint, warning, request) {
  let latest = 0;
  let timer = null;
  const show = (text, over) => {
    fill(hint, text);
    const warned = over ? `Over the cap: this ${name} will earn 0 coverage. Shorten it before submitting.` : "";
    if (warning.textContent !== warned) fill(warning, warned); // a live region: said once, not at each pause
  };
  const count = async () => {
    const asked = ++latest;
    let answer;
    try {
      answer = (await request("POST", "support_queue/word_count", { [name]: control.value }))[name];
    } catch {
      answer = null;
    }
    if (asked !== latest) return; // the text changed since: its own answer is on its way
    if (!answer || !Number.isInteger(answer.words) || !Number.isInteger(answer.cap)) {
      show("Word count unavailable (the server did not answer); the grader counts on submission.", false);
      return;
    }
    show(`${answer.words} / ${answer.cap} words`, answer.words > answer.cap);
  };
  control.addEventListener("input", () => {
    latest++; // any answer still on its way is for an older text
    fill(hint, "Counting words\u2026"); // the warning stays until the new count decides it
    clearTimeout(timer);
    timer = setTimeout(count, COUNT_DELAY_MS);
  });
  count();
}

function ticketView(observation) {
  const ticket = observation.ticket;
  return el(
    "article",
    { class: "ticket", "aria-labelledby": "ticket-title" },
    el(
      "h3",
      { id: "ticket-title", tabIndex: -1 },
      `Ticket ${observation.current_index + 1} of ${observation.total_tickets}: `,
      el("span", { id: "ticket-subject" }, ticket.subject),
    ),
    el(
      "dl",
      { class: "facts ticket-meta" },
      el("dt", {}, "Ticket"),
      el("dd", { id: "ticket-id" }, ticket.ticket_id),
      el("dt", {}, "Customer tier"),
      el("dd", {}, ticket.customer_tier),
      el("dt", {}, "Product area"),
      el("dd", {}, ticket.product_area),
      el("dt", {}, "First-response SLA"),
      el("dd", {}, `${ticket.sla_hours} h`),
    ),
    el("div", { class: "ticket-body", id: "ticket-body" }, ticket.body),
    el("h4", {}, "Recent events"),
    ticket.recent_events.length
      ? el("ul", { id: "ticket-events" }, ticket.recent_events.map((line) => el("li", {}, line)))
      : el("p", { class: "muted" }, "None."),
  );
}

function triageForm(observation, submit, request) {
  const choices = {
    priority: observation.allowed_priorities,
    queue: observation.allowed_queues,
    disposition: observation.allowed_dispositions,
  };
  const controls = {};
  const fields = LABELS.map((name) => {
    controls[name] = select(choices[name], "Choose\u2026");
    controls[name].required = true;
    return field(`triage-${name}`, name[0].toUpperCase() + name.slice(1), controls[name]);
  });
  for (const name of TEXTS) {
    controls[name] = el("textarea", { rows: name === "summary" ? 3 : 5 });
    const label = name === "summary" ? "Summary (internal note)" : "Response (first reply to the customer)";
    const box = field(`triage-${name}`, label, controls[name], "Counting words\u2026");
    const hint = box.querySelector(".hint"); // read with the box (aria-describedby), not at each pause
    const warning = el("p", { class: "warning", id: `triage-${name}-warning`, "aria-live": "assertive" });
    box.append(warning);
    controls[name].setAttribute("aria-describedby", `${hint.id} ${warning.id}`);
    fields.push(box);
    wordCounter(name, controls[name], hint, warning, request);
  }
  controls.confidence = el("input", { type: "number", min: "0", max: "1", step: "any", value: "0.5", required: true });
  fields.push(field("triage-confidence", "Confidence", controls.confidence, "From 0 to 1."));
  const form = el("form", { id: "triage-form", "aria-labelledby": "action-title" }, fields, el("button", { type: "submit", id: "submit-triage" }, "Submit triage"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const action = {};
    for (const name of [...LABELS, ...TEXTS]) action[name] = controls[name].value;
    action.confidence = Number(controls.confidence.value);
    submit(action);
  });
  return form;
}

export function mount(panel, observation, submit, request) {
  panel.submitTriage = submit;
  panel.request = request;
  next(panel, observation);
}

export function next(panel, observation) {
  if (!observation.ticket) {
    fill(panel, el("h3", { id: "action-title" }, "Triage"), el("p", {}, "Every ticket of this task has been triaged."));
    return;
  }
  const focusTicket = panel.childElementCount > 0;
  fill(
    panel,
    el("h3", { id: "action-title", class: "visually-hidden" }, "Triage"),
    ticketView(observation),
    el("details", {}, el("summary", {}, "How to triage (the task's instructions)"), el("div", { class: "instructions" }, observation.instructions)),
    triageForm(observation, panel.submitTriage, panel.request),
  );
  if (focusTicket) document.getElementById("ticket-title").focus();
}

// ------------------------------------------------------------------ grading

function textRow(name, graded) {
  return [
    name,
    `${graded.word_count} of at most ${graded.word_cap} words`,
    el(
      "div",
      {},
      `coverage ${Math.round(graded.coverage * 100)}%`,
      graded.flags.length ? [" \u2014 flags: ", graded.flags.join(", ")] : null,
      el("div", { class: "facts-found" }, "matched: ", codes(graded.matched)),
      el("div", { class: "facts-found" }, "missing: ", codes(graded.missing)),
    ),
    `${fmt(graded.earned)} / ${fmt(graded.weight)}`,
  ];
}

function feedbackTable(feedback) {
  const rows = LABELS.map((name) => {
    const graded = feedback[name];
    return [name, graded.chosen, graded.correct ? "correct" : "wrong", `${fmt(graded.earned)} / ${fmt(graded.weight)}`];
  });
  rows.push(textRow("summary", feedback.summary), textRow("response", feedback.response));
  const unsafe = feedback.unsafe;
  rows.push([
    "unsafe reply",
    unsafe.hits.length ? el("ul", {}, unsafe.hits.map((hit) => el("li", {}, el("code", {}, hit.rule), ": \u201c", hit.excerpt, "\u201d"))) : "none",
    unsafe.hits.length ? "penalised" : "safe",
    fmt(unsafe.penalty),
  ]);
  return table(`Grading of ticket ${feedback.ticket_id}`, ["Component", "Your answer", "Result", "Earned / weight"], rows);
}

export function result(container, stepResult) {
  const observation = stepResult.observation;
  const feedback = observation.last_feedback;
  fill(
    container,
    el("h3", {}, "Last ticket"),
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "Reward"),
      el("dd", { id: "last-reward" }, reward(stepResult.reward)),
      el("dt", {}, "Tickets graded"),
      el("dd", {}, `${observation.info.tickets_graded} of ${observation.total_tickets}`),
    ),
    el("div", { id: "feedback" }, feedbackTable(feedback)),
  );
}

export function history(container, state) {
  const rows = state.action_history.map((action, i) => {
    const graded = state.grading_history[i] || {};
    return [String(action.step), action.ticket_id, action.priority, action.queue, action.disposition, reward(graded.reward)];
  });
  fill(container, table("Every ticket so far (from /state)", ["Step", "Ticket", "Priority", "Queue", "Disposition", "Reward"], rows));
}

export function outcome(container, state) {
  fill(
    container,
    el("h3", { id: "outcome-title", tabIndex: -1 }, "Outcome"),
    el(
      "dl",
      { class: "facts" },
      el("dt", {}, "Final score (mean reward per ticket)"),
      el("dd", { id: "final-score" }, fmt(state.average_reward)),
      el("dt", {}, "Tickets triaged"),
      el("dd", {}, `${state.processed_ticket_ids.length} of ${state.total_tickets}`),
    ),
  );
}
