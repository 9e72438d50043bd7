-- wrk script: ServiceBench episodes over HTTP (a reset, then the steps of a task),
-- the episode id read from each reset's response and threaded into its steps.
--
--   wrk -t N -c N -d 10s -s bench/lua/episodes.lua URL -- PLAN.lua
--
-- Run with one connection per thread (-t = -c): each thread's requests and
-- responses then alternate strictly, so "the current step" is well defined.
-- PLAN.lua is written by bench/plans.py. At the end it prints one line,
-- "BENCH_JSON {...}", with the counts and latency percentiles (microseconds).

local plan
local episode_index, step_index = 1, 0
local episode_id = "none"

-- globals, so that done() can read them from each thread with thread:get()
episodes_done, steps_sent, bad_replies = 0, 0, 0

local threads = {}
local next_thread_id = 0

function setup(thread)
  thread:set("thread_id", next_thread_id)
  next_thread_id = next_thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  plan = dofile(args[1])
  -- stagger the threads over the cycle so that they do not all play the same task at once
  episode_index = (thread_id % #plan.episodes) + 1
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local episode = plan.episodes[episode_index]
  if step_index == 0 then
    return wrk.format("POST", plan.reset_path, nil, episode.reset)
  end
  steps_sent = steps_sent + 1
  local body = '{"action":' .. episode.steps[step_index] .. ',"episode_id":"' .. episode_id .. '"}'
  return wrk.format("POST", plan.step_path, nil, body)
end

function response(status, headers, body)
  local episode = plan.episodes[episode_index]
  if status ~= 200 then
    bad_replies = bad_replies + 1
  end
  if step_index == 0 then
    episode_id = string.match(body, '"episode_id":"([^"]+)"') or "none"
  end
  if step_index < #episode.steps then
    step_index = step_index + 1
    return
  end
  if episode.ends_done ~= nil then
    local finished = string.find(body, '"done":true', 1, true) ~= nil
    local perfect = string.find(body, '"cumulative_reward":1.0', 1, true) ~= nil
    if finished ~= episode.ends_done or (episode.ends_done and not perfect) then
      bad_replies = bad_replies + 1
    end
  end
  episodes_done = episodes_done + 1
  step_index = 0
  episode_index = (episode_index % #plan.episodes) + 1
end

function done(summary, latency, requests)
  local episodes, steps, bad = 0, 0, 0
  for _, thread in ipairs(threads) do
    episodes = episodes + thread:get("episodes_done")
    steps = steps + thread:get("steps_sent")
    bad = bad + thread:get("bad_replies")
  end
  local errors = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"episodes":%d,"steps":%d,"bad_replies":%d,' ..
    '"non_2xx":%d,"socket_errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, episodes, steps, bad, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
