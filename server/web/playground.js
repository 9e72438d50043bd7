// The playground: pick an environment, a task and a seed, then play the episode over this
// server's own HTTP API (/tasks, /reset, /step, /state), exactly as an agent would.
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
let episode = null; // {id, env, view, curl: [], busy}

class ApiError extends Error {}

async function request(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(new URL(path, API), options);
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    // not JSON: reported below by status
  }
  if (!response.ok) {
    const detail = payload && payload.detail ? payload.detail : response.statusText;
    throw new ApiError(`${method} /${path} answered ${response.status}: ${detail}`);
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
  fill($("error"));
  fill($("status"), text);
}

function fail(error) {
  fill($("error"), error instanceof ApiError ? error.message : `Request failed: ${error.message}`);
}

function setBusy(busy) {
  episode && (episode.busy = busy);
  for (const button of document.querySelectorAll("button")) button.disabled = busy;
  document.body.setAttribute("aria-busy", busy ? "true" : "false");
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

function describeTask() {
  const task = tasks.find((t) => t.id === $("task").value);
  fill($("task-hint"), task ? `${task.description} Step budget: ${task.max_steps}.` : "");
}

async function loadTasks() {
  try {
    tasks = (await request("GET", "tasks")).tasks;
  } catch (error) {
    fail(error);
    return;
  }
  const envs = [...new Set(tasks.map((task) => task.env))];
  fill($("env"), envs.map((env) => el("option", { value: env }, ENV_NAMES[env] || env)));
  showTasks();
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
  const body = { env, task_id: $("task").value };
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  setBusy(true);
  try {
    const result = await request("POST", "reset", body);
    const view = VIEWS[env];
    episode = { id: result.episode_id, env, view, curl: [curlReset(body)], busy: false };
    const task = tasks.find((t) => t.id === body.task_id);
    fill($("episode-title"), `${ENV_NAMES[env] || env}: ${task ? task.title : body.task_id}`);
    fill($("episode-id"), result.episode_id);
    fill($("seed-shown"), seed === "" ? "canonical" : seed);
    for (const id of ["result", "outcome"]) fill($(id));
    $("episode").hidden = false;
    view.mount($("action"), result.observation, step);
    showScore(result.observation, result.done);
    fill($("history"), el("p", { class: "muted" }, "No step yet."));
    showCurl();
    announce(`Episode started: ${task ? task.title : body.task_id}.`);
    $("episode-title").focus();
  } catch (error) {
    fail(error);
  } finally {
    setBusy(false);
  }
}

async function step(action) {
  if (!episode || episode.busy) return;
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
      setBusy(false);
      for (const control of $("action").querySelectorAll("button, input, select, textarea")) {
        control.disabled = true;
      }
      $("outcome-title").focus();
      return;
    }
  } catch (error) {
    fail(error);
  }
  setBusy(false);
}

$("env").addEventListener("change", showTasks);
$("task").addEventListener("change", describeTask);
$("start-form").addEventListener("submit", start);
loadTasks();
