"""The Lua scripts of the Redis store: each operation is one atomic script (one round trip).

Keys, under a prefix P (ARGV[1] of every script): `P ep:<id>` is an episode's log (a list:
its header, then one entry per step) and carries the idle TTL; `P meta` maps an episode
to its client and owner (server/lifecycle/owners.py), `client\\nowner`; `P used` orders the held
episodes by last use (the cap's count, and expiry); `P shares` counts each client's held
episodes (the cap's victim is the largest's), `P cu:<client>` orders a client's episodes by
last use and `P cd:<client>` its finished ones by when they finished; `P latest` maps an
env (and `*`) to its latest episode. Everything but the log lives until `forget` removes
it: when the episode is dropped, evicted, or found expired. Times are the Redis server's
clock (`TIME`), so the processes' clocks never matter. Every reply is an array whose first
element is a status (server/store/backend.py): 0 gone, 1 done, 2 stale, 3 replaced, 4
foreign (another owner's).
"""

from __future__ import annotations

EXPIRED_PER_CREATE = 128
"""How many expired episodes a create forgets at most (the rest, on later creates)."""

_COMMON = """
local P = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function meta_of(id)  -- client, owner ('' and '' if none)
  local meta = redis.call('HGET', P .. 'meta', id)
  if not meta then return '', '' end
  local cut = string.find(meta, '\\n', 1, true)
  return string.sub(meta, 1, cut - 1), string.sub(meta, cut + 1)
end
local function touch(id, ttl, client)
  local now = now_ms()
  redis.call('PEXPIRE', P .. 'ep:' .. id, ttl)
  redis.call('ZADD', P .. 'used', now, id)
  if client ~= '' then redis.call('ZADD', P .. 'cu:' .. client, now, id) end
end
local function count(client, by)
  if redis.call('ZINCRBY', P .. 'shares', by, client) + 0 <= 0 then
    redis.call('ZREM', P .. 'shares', client)
  end
end
local function leave_share(id, client)
  if client == '' then return nil end
  redis.call('ZREM', P .. 'cu:' .. client, id)
  local finished = redis.call('ZSCORE', P .. 'cd:' .. client, id)
  redis.call('ZREM', P .. 'cd:' .. client, id)
  count(client, -1)
  return finished
end
local function forget(id)  -- the episode leaves every structure
  local client = meta_of(id)
  leave_share(id, client)
  redis.call('DEL', P .. 'ep:' .. id)
  redis.call('ZREM', P .. 'used', id)
  redis.call('HDEL', P .. 'meta', id)
end
local function set_latest(id, env)
  redis.call('HSET', P .. 'latest', env, id, '*', id)
end
local function with_status(status, elements)
  table.insert(elements, 1, status)
  return elements
end
"""

CREATE = (
    _COMMON
    + f"""
-- ARGV: prefix, id, header, env, latest (0|1), ttl ms, max live, owner, client
local id, ttl, cap, client = ARGV[2], tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[9]
local log = P .. 'ep:' .. id
if redis.call('EXISTS', log) == 1 then return {{0}} end
if redis.call('HEXISTS', P .. 'meta', id) == 1 then forget(id) end  -- an expired one's
local now = now_ms()
local expired = redis.call(
  'ZRANGEBYSCORE', P .. 'used', '-inf', now - ttl, 'LIMIT', 0, {EXPIRED_PER_CREATE})
for _, old in ipairs(expired) do forget(old) end
local evicted = 0
while redis.call('ZCARD', P .. 'used') >= cap do
  local oldest = redis.call('ZRANGE', P .. 'used', 0, 0, 'WITHSCORES')
  local victim = oldest[1]
  if tonumber(oldest[2]) > now - ttl and redis.call('EXISTS', P .. 'ep:' .. victim) == 1 then
    local heaviest = redis.call('ZREVRANGE', P .. 'shares', 0, 0)[1]
    if heaviest then
      victim = redis.call('ZRANGE', P .. 'cd:' .. heaviest, 0, 0)[1]
        or redis.call('ZRANGE', P .. 'cu:' .. heaviest, 0, 0)[1] or victim
    end
    evicted = evicted + 1
  end
  forget(victim)
end
redis.call('RPUSH', log, ARGV[3])
redis.call('HSET', P .. 'meta', id, client .. '\\n' .. ARGV[8])
count(client, 1)
touch(id, ttl, client)
if ARGV[5] == '1' then set_latest(id, ARGV[4]) end
return {{1, evicted}}
"""
)

REPLACE = (
    _COMMON
    + """
-- ARGV: prefix, id, header, env, latest (0|1), ttl ms, owner
local id = ARGV[2]
local log = P .. 'ep:' .. id
if redis.call('EXISTS', log) == 0 then return {0} end
local client, owner = meta_of(id)
if owner ~= ARGV[7] then return {4} end
redis.call('DEL', log)
redis.call('RPUSH', log, ARGV[3])
if client ~= '' then redis.call('ZREM', P .. 'cd:' .. client, id) end
touch(id, ARGV[6], client)
if ARGV[5] == '1' then set_latest(id, ARGV[4]) end
return {1}
"""
)

APPEND = (
    _COMMON
    + """
-- ARGV: prefix, id, steps the caller has, entry, done (0|1), header, ttl ms
local id = ARGV[2]
local log = P .. 'ep:' .. id
local length = redis.call('LLEN', log)
if length == 0 then return {0} end
local client = meta_of(id)
touch(id, ARGV[7], client)
if redis.call('LINDEX', log, 0) ~= ARGV[6] then
  return with_status(3, redis.call('LRANGE', log, 0, -1))
end
local steps = tonumber(ARGV[3])
if length ~= steps + 1 then
  return with_status(2, redis.call('LRANGE', log, steps + 1, -1))
end
redis.call('RPUSH', log, ARGV[4])
if ARGV[5] == '1' and client ~= '' then
  redis.call('ZADD', P .. 'cd:' .. client, 'NX', now_ms(), id)
end
return {1}
"""
)

READ = (
    _COMMON
    + """
-- ARGV: prefix, id, start index, header the caller knows ('' for any), ttl ms,
-- owner it must be ('' for any)
local id = ARGV[2]
local log = P .. 'ep:' .. id
if redis.call('EXISTS', log) == 0 then return {0} end
local client, owner = meta_of(id)
if ARGV[6] ~= '' and owner ~= ARGV[6] then return {4} end
touch(id, ARGV[5], client)
if ARGV[4] ~= '' and redis.call('LINDEX', log, 0) ~= ARGV[4] then
  return with_status(3, redis.call('LRANGE', log, 0, -1))
end
return with_status(1, redis.call('LRANGE', log, tonumber(ARGV[3]), -1))
"""
)

HAND_OVER = (
    _COMMON
    + """
-- ARGV: prefix, id, owner it must have, new owner, new client ('' keeps it), ttl ms
local id, to = ARGV[2], ARGV[4]
if redis.call('EXISTS', P .. 'ep:' .. id) == 0 then return {0} end
local client, owner = meta_of(id)
if owner ~= ARGV[3] then return {4} end
if ARGV[5] ~= '' and ARGV[5] ~= client then
  local finished = leave_share(id, client)
  client = ARGV[5]
  count(client, 1)
  if finished then redis.call('ZADD', P .. 'cd:' .. client, finished, id) end
end
redis.call('HSET', P .. 'meta', id, client .. '\\n' .. to)
touch(id, ARGV[6], client)
return {1}
"""
)

DROP = (
    _COMMON
    + """
-- ARGV: prefix, id, owner
local id = ARGV[2]
if redis.call('EXISTS', P .. 'ep:' .. id) == 0 then return {0} end
local _, owner = meta_of(id)
if owner ~= ARGV[3] then return {4} end
forget(id)
return {1}
"""
)

SCRIPTS = {
    "create": CREATE,
    "replace": REPLACE,
    "append": APPEND,
    "read": READ,
    "hand_over": HAND_OVER,
    "drop": DROP,
}
