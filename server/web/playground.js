// The playground: pick an environment, a task and a seed (or a split and an index of OpenEnv's
// Task API) and, for ServiceBench, a fault level; then play the episode over this server's own
// HTTP API (/tasks, /{env}/splits, /{env}/task, /reset, /step, /state), as an agent would.
// Each environment's form, results and outcome live in its own module.
import { el, fill, reward, score } from "./dom.js";
import * as servicebench from "./servicebench.js";
import * as supportQueue from "./support-queue.js";

const VIEWS = { servicebench, support_queue: supportQueue };
const ENV_NAMES = { servicebench: "ServiceBench", support_queue: "Support Queue" };
// The app's root, from the page's own address: right on any host, behind a proxy or a prefix.
const API = new URL("../", document.baseURI);
const BASE = API.href.replace(/\/$/, "");

const $ = (id) => document.getElementById(id);
let tasks = [];
const splits = {}; // env -> its split descriptors (GET /{env}/splits)
let episode = null; // {id, env, view, curl: [], busy, over}

/** The server answered, with an error status (kept: a 404 on an episode means it is gone). */
class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** No answer at all: the server is down, or not where the page was loaded from. */
class Unreachable extends Error {}

async function request(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(new URL(path, API), options);
  } catch {
    // fetch's own words ("Failed to fetch", "NetworkError when attempting...") say nothing useful
    throw new Unreachable(`The server could not be reached at ${BASE}; is it running?`);
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    // not JSON: reported below by status
  }
  if (!response.ok) {
    const detail = payload && payload.detail ? payload.detail : response.statusText;
    throw new ApiError(`${method} /${path} answered ${response.status}: ${detail}`, response.status);
  }
  return payload;
}

// ------------------------------------------------------------------ curl lines

function shellQuote(text) {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function curlReset(body) {
  return (
    `EP=$(curl -s -X POST ${BASE}/reset -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(body))}` +
    ` | python3 -c 'import json, sys; print(json.load(sys.stdin)["episode_id"])')`
  );
}

function curlStep(action) {
  return (
    `curl -s -X POST ${BASE}/step -H 'Content-Type: application/json' -H "X-Episode-Id: $EP"` +
    ` -d ${shellQuote(JSON.stringify({ action }))}`
  );
}

function showCurl() {
  const lines = [...episode.curl, `curl -s ${BASE}/state -H "X-Episode-Id: $EP"`];
  fill($("curl"), lines.join("\n"));
}

// ------------------------------------------------------------------ messages

function announce(text) {
  clearErrors();
  fill($("status"), text);
}

/** The alert right below `anchor`, the control whose request failed (made on first use). */
function alertBelow(anchor) {
  let slot = anchor.nextElementSibling;
  if (!slot || !slot.matches(".error[role=alert]")) {
    slot = el("div", { class: "error", role: "alert" });
    anchor.after(slot);
  }
  return slot;
}

function clearErrors() {
  for (const slot of document.querySelectorAll(".error[role=alert]")) fill(slot);
}

/** Say what went wrong next to what caused it, and bring it into view. */
function fail(error, anchor, advice = "") {
  const known = error instanceof ApiError || error instanceof Unreachable;
  const slot = alertBelow(anchor);
  fill(slot, known ? error.message : `Request failed: ${error.message}`, advice ? ` ${advice}` : "");
  slot.scrollIntoView({ block: "nearest" });
}

/** Where a step's error goes: below the action's form (its submit button ends it). */
function actionAnchor() {
  return $("action").querySelector("form") || $("action");
}

function setBusy(busy) {
  episode && (episode.busy = busy);
  for (const button of document.querySelectorAll("button")) {
    button.disabled = busy || Boolean(episode && episode.over && $("action").contains(button));
  }
  document.body.setAttribute("aria-busy", busy ? "true" : "false");
}

/** The episode is over (done, or lost by the server): its controls stop, Start stays. */
function endEpisode(status) {
  episode.over = true;
  fill($("episode-status"), status);
  for (const control of $("action").querySelectorAll("button, input, select, textarea")) {
    control.disabled = true;
  }
}

// ------------------------------------------------------------------ setup

function showTasks() {
  const env = $("env").value;
  const select = $("task");
  const chosen = tasks.filter((task) => task.env === env);
  fill(
    select,
    chosen.map((task) =>
      el("option", { value: task.id }, `${task.title} (${task.difficulty}, ${task.id})`),
    ),
  );
  describeTask();
}

/** The fault level is ServiceBench's: offered only there. */
function showFaults() {
  const servicebench = $("env").value === "servicebench";
  $("faults-field").hidden = $("faults-hint").hidden = !servicebench;
  $("faults").disabled = !servicebench;
}

function describeTask() {
  const task = tasks.find((t) => t.id === $("task").value);
  fill($("task-hint"), task ? `${task.description} Step budget: ${task.max_steps}.` : "");
}

// ------------------------------------------------------------------ splits

function chosenSplit() {
  return (splits[$("env").value] || []).find((split) => split.name === $("split").value);
}

async function showSplits() {
  const env = $("env").value;
  if (!splits[env]) {
    // Until this environment's splits arrive, offer none: a choice made among the previous
    // environment's options would be wiped when the new list lands.
    $("split").disabled = true;
    fill($("split"), el("option", { value: "" }, "Loading splits…"));
    try {
      splits[env] = await request("GET", `${env}/splits`);
    } catch (error) {
      fail(error, $("split"));
    }
    if ($("env").value !== env) return; // the user moved on; that environment's call draws it
  }
  $("split").disabled = false;
  fill(
    $("split"),
    el("option", { value: "" }, "None: the task and seed above"),
    (splits[env] || []).map((split) => {
      const count = split.num_tasks.toLocaleString("en");
      return el("option", { value: split.name }, `${split.name} (${count} tasks)`);
    }),
  );
  await describeSplit();
}

async function describeSplit() {
  const split = chosenSplit();
  $("index").disabled = !split;
  $("task").disabled = $("seed").disabled = Boolean(split);
  if (!split) {
    fill($("split-hint"), "Each split lists its families; a task is one family on one seed.");
    fill($("split-task"));
    return;
  }
  $("index").max = String(split.num_tasks - 1);
  fill($("split-hint"), `${split.description} Families: ${split.families.join(", ")}.`);
  await describeIndex();
}

async function describeIndex() {
  const split = chosenSplit();
  if (!split) return;
  const body = { split: split.name, index: Number($("index").value) };
  if (!Number.isInteger(body.index) || body.index < 0 || body.index >= split.num_tasks) {
    const last = (split.num_tasks - 1).toLocaleString("en");
    fill($("split-task"), `Index out of range: ${split.name} has indices 0 to ${last}.`);
    return;
  }
  try {
    const { task } = await request("POST", `${$("env").value}/task`, body);
    fill(
      $("split-task"),
      `Task ${task.index}: ${task.id}, family ${task.family} ` +
        `(${task.title}, ${task.difficulty}, seed ${task.seed}).`,
    );
  } catch (error) {
    fill($("split-task"), error.message);
  }
}

async function loadTasks() {
  try {
    tasks = (await request("GET", "tasks")).tasks;
  } catch (error) {
    fail(error, $("start"), "Reload the page to try again.");
    return;
  }
  const envs = [...new Set(tasks.map((task) => task.env))];
  fill($("env"), envs.map((env) => el("option", { value: env }, ENV_NAMES[env] || env)));
  showTasks();
  showFaults();
  await showSplits();
  $("start").disabled = false;
}

// ------------------------------------------------------------------ the episode

function showScore(observation, done) {
  const info = observation.info || {};
  fill($("score"), score(episode.view.score(observation)));
  fill($("steps"), `${info.step ?? 0} of ${info.max_steps ?? "?"}`);
  fill($("episode-status"), done ? episode.view.ending(observation) : "in progress");
}

async function start(event) {
  event.preventDefault();
  const env = $("env").value;
  const split = chosenSplit();
  const body = split
    ? { env, split: split.name, index: Number($("index").value) }
    : { env, task_id: $("task").value };
  const seed = $("seed").value.trim();
  if (!split && seed !== "") body.seed = Number(seed);
  const faults = env === "servicebench" ? $("faults").value : "off";
  if (faults !== "off") body.faults = faults;
  setBusy(true);
  try {
    const result = await request("POST", "reset", body);
    const view = VIEWS[env];
    episode = { id: result.episode_id, env, view, curl: [curlReset(body)], busy: false, over: false };
    const task = tasks.find((t) => t.id === body.task_id);
    const name = split ? `${split.name} task ${body.index}` : task ? task.title : body.task_id;
    const shown = split
      ? (await request("GET", `state?episode_id=${encodeURIComponent(result.episode_id)}`)).seed
      : seed || "canonical";
    fill($("episode-title"), `${ENV_NAMES[env] || env}: ${name}`);
    fill($("episode-id"), result.episode_id);
    fill($("seed-shown"), String(shown));
    fill($("faults-shown"), faults);
    $("faults-shown-row").hidden = env !== "servicebench";
    for (const id of ["result", "outcome"]) fill($(id));
    $("episode").hidden = false;
    view.mount($("action"), result.observation, step, request);
    showScore(result.observation, result.done);
    fill($("history"), el("p", { class: "muted" }, "No step yet."));
    showCurl();
    announce(`Episode started: ${name}.`);
    $("episode-title").focus();
  } catch (error) {
    fail(error, $("start"));
  } finally {
    setBusy(false);
  }
}

async function step(action) {
  if (!episode || episode.busy || episode.over) return;
  setBusy(true);
  try {
    const result = await request("POST", "step", { episode_id: episode.id, action });
    episode.curl.push(curlStep(action));
    const observation = result.observation;
    episode.view.result($("result"), result);
    showScore(observation, result.done);
    const state = await request("GET", `state?episode_id=${encodeURIComponent(episode.id)}`);
    episode.view.history($("history"), state);
    showCurl();
    let message = `Step ${observation.info.step}: reward ${reward(result.reward)}, score ${score(episode.view.score(observation))}.`;
    if (result.done) {
      episode.view.outcome($("outcome"), state, observation);
      message += ` Episode over: ${episode.view.ending(observation)}.`;
    }
    episode.view.next($("action"), observation);
    announce(message);
    if (result.done) {
      endEpisode(episode.view.ending(observation));
      setBusy(false);
      $("outcome-title").focus();
      return;
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      // expired, dropped or closed on the server: nothing more can be played in it
      endEpisode("lost: the server no longer has this episode");
      fail(error, actionAnchor(), "This episode has ended; start a new one above.");
    } else {
      fail(error, actionAnchor());
    }
  }
  setBusy(false);
}

$("env").addEventListener("change", () => {
  showTasks();
  showFaults();
  showSplits();
});
$("split").addEventListener("change", describeSplit);
$("index").addEventListener("change", describeIndex);
$("task").addEventListener("change", describeTask);
$("start-form").addEventListener("submit", start);
loadTasks();
