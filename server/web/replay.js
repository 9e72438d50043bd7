// Replay a results file of inference.py, step by step. The file is read in this browser
// (File.text()), never sent anywhere: the page makes no request for it. Everything in the
// file is shown as text (dom.js), since an episode's actions and answers are anyone's text.
import { codes, el, fill, pretty, reward, score, table, yesNo } from "./dom.js";

const $ = (id) => document.getElementById(id);
const LABELS = ["priority", "queue", "disposition"];
const TEXTS = ["summary", "response"];
let episodes = [];
let current = null; // {episode, index}

/** The episodes of a results document; an Error naming the problem when it is not one. */
export function episodesOf(document) {
  if (!document || typeof document !== "object" || !Array.isArray(document.tasks)) {
    throw new Error("This is not an inference.py results file: it has no `tasks` list of episodes.");
  }
  document.tasks.forEach((episode, index) => {
    if (!episode || typeof episode !== "object" || !Array.isArray(episode.trajectory)) {
      throw new Error(`Episode ${index + 1} of the file has no trajectory to replay.`);
    }
  });
  return document.tasks;
}

function episodeLabel(episode, index) {
  const seed = episode.seed === null || episode.seed === undefined ? "canonical" : `seed ${episode.seed}`;
  const verdict = episode.success ? "success" : "no success";
  const family = episode.family ? ` · ${episode.family}` : "";
  return `${index + 1}. ${episode.task_id} · ${episode.env}${family} · ${seed} · try ${Number(episode.repeat ?? 0) + 1} · score ${score(episode.score)} (${verdict})`;
}

function grading(feedback) {
  const rows = LABELS.map((key) => {
    const part = feedback[key] || {};
    return [key, String(part.chosen ?? ""), part.correct ? "right" : "wrong", `${score(part.earned)} of ${part.weight ?? 0}`];
  });
  for (const key of TEXTS) {
    const part = feedback[key] || {};
    rows.push([key, `coverage ${score(part.coverage)}; missing: ${(part.missing || []).join(", ") || "none"}`, (part.flags || []).join(", "), `${score(part.earned)} of ${part.weight ?? 0}`]);
  }
  const unsafe = feedback.unsafe || {};
  rows.push(["unsafe", (unsafe.hits || []).map((h) => h.rule).join(", ") || "none", "", `\u2212${score(unsafe.penalty)}`]);
  return table(`Grading of ticket ${feedback.ticket_id}: reward ${score(feedback.reward)}`, ["Component", "Answer", "Verdict", "Earned"], rows);
}

function outcome(report) {
  const damage = report.collateral_damage || [];
  return el(
    "div",
    { id: "replay-outcome" },
    el("h4", {}, "End-state check"),
    el("p", {}, `End state matches: ${yesNo(report.end_state_matches)}; collateral damage: ${damage.length ? damage.map((c) => `${c.table} ${c.key}.${c.field}`).join(", ") : "none"}`),
  );
}

function stepView(step) {
  const observation = step.observation || {};
  const facts = [
    ["Reward", reward(step.reward)],
    ["Done", yesNo(step.done)],
    ["Error", step.error || "none"],
  ];
  if (step.stand_in) facts.push(["Stand-in", "yes: the agent gave no usable decision"]);
  if ("cumulative_reward" in observation) facts.push(["Score so far", score(observation.cumulative_reward)]);
  if ("average_reward" in observation) facts.push(["Average so far", score(observation.average_reward)]);
  const parts = [
    el("h3", { id: "replay-step-title", tabindex: "-1" }, `Step ${step.step}`),
    el("h4", {}, "Action"),
    el("pre", { id: "replay-action" }, step.action === null ? "no action" : pretty(step.action)),
    el("dl", { class: "facts", id: "replay-facts" }, facts.map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)])),
  ];
  if (observation.reward_signals) parts.push(el("h4", {}, "Reward signals"), codes(observation.reward_signals));
  if (observation.api_response !== undefined) parts.push(el("h4", {}, "API response"), el("pre", {}, String(observation.api_response)));
  if (observation.last_feedback) parts.push(grading(observation.last_feedback));
  if (observation.outcome) parts.push(outcome(observation.outcome));
  parts.push(el("details", {}, el("summary", {}, "The observation summary, as recorded"), el("pre", {}, pretty(observation))));
  return parts;
}

function show(index) {
  const { episode } = current;
  const steps = episode.trajectory;
  current.index = index;
  $("replay-prev").disabled = index <= 0;
  $("replay-next").disabled = index >= steps.length - 1;
  if (steps.length === 0) {
    fill($("replay-position"), "This episode has no step.");
    fill($("replay-step"), episode.error ? `Error: ${episode.error}` : "");
    return;
  }
  fill($("replay-position"), `Step ${index + 1} of ${steps.length}`);
  fill($("replay-step"), stepView(steps[index]));
}

function choose(position) {
  const episode = episodes[position];
  current = { episode, index: 0 };
  fill(
    $("replay-summary"),
    [["Task", `${episode.task_id} (${episode.env})`], ["Score", score(episode.score)], ["Success", yesNo(episode.success)], ["Steps", String(episode.trajectory.length)], ["Error", episode.error || "none"]].map(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]),
  );
  $("replay-view").hidden = false;
  show(0);
}

async function open(file) {
  fill($("replay-error"));
  $("replay-view").hidden = true;
  const select = $("replay-episode");
  select.disabled = true;
  fill(select);
  episodes = [];
  try {
    let document;
    try {
      document = JSON.parse(await file.text());
    } catch (error) {
      throw new Error(`${file.name} is not JSON: ${error.message}`);
    }
    episodes = episodesOf(document);
  } catch (error) {
    fill($("replay-error"), error.message);
    return;
  }
  if (episodes.length === 0) {
    fill($("replay-error"), `${file.name} holds no episode.`);
    return;
  }
  fill(select, episodes.map((episode, index) => el("option", { value: String(index) }, episodeLabel(episode, index))));
  select.disabled = false;
  choose(0);
}

function init() {
  $("replay-file").addEventListener("change", (event) => {
    const [file] = event.target.files;
    if (file) open(file);
  });
  $("replay-episode").addEventListener("change", (event) => choose(Number(event.target.value)));
  $("replay-prev").addEventListener("click", () => show(current.index - 1));
  $("replay-next").addEventListener("click", () => show(current.index + 1));
}

init();
