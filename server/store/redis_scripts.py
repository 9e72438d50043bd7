"""The Lua scripts of the Redis store: each operation is one atomic script (one round trip).

Keys: `<prefix>ep:<id>` is an episode's log (a list: its header, then one entry per
step) and carries the idle TTL; `<prefix>used` orders the held episodes by last use
(the cap's count and its longest-idle victim), `<prefix>done` the finished ones by
when they finished (the cap's first victims), `<prefix>latest` maps an env (and `*`)
to its latest episode. Times are the Redis server's clock (`TIME`), so the processes'
clocks never matter. Every reply is an array whose first element is a status
(server/store/backend.py): 0 gone, 1 done, 2 stale, 3 replaced.
"""

from __future__ import annotations

_COMMON = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function touch(log, used, id, ttl)
  redis.call('PEXPIRE', log, ttl)
  redis.call('ZADD', used, now_ms(), id)
end
local function with_status(status, elements)
  table.insert(elements, 1, status)
  return elements
end
"""

CREATE = (
    _COMMON
    + """
-- KEYS: log, used, done, latest; ARGV: id, header, env, latest (0|1), ttl ms, max live, prefix
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local now, ttl = now_ms(), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - ttl, 'LIMIT', 0, 64)) do
  if not redis.call('ZSCORE', KEYS[2], id) then redis.call('ZREM', KEYS[3], id) end
end
local evicted = 0
while redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) do
  local victim = nil
  repeat
    local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
    if first and redis.call('ZSCORE', KEYS[2], first) then victim = first
    elseif first then redis.call('ZREM', KEYS[3], first) end
  until victim or not first
  victim = victim or redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  redis.call('DEL', ARGV[7] .. 'ep:' .. victim)
  redis.call('ZREM', KEYS[2], victim)
  redis.call('ZREM', KEYS[3], victim)
  evicted = evicted + 1
end
redis.call('RPUSH', KEYS[1], ARGV[2])
touch(KEYS[1], KEYS[2], ARGV[1], ttl)
if ARGV[4] == '1' then redis.call('HSET', KEYS[4], ARGV[3], ARGV[1], '*', ARGV[1]) end
return {1, evicted}
"""
)

APPEND = (
    _COMMON
    + """
-- KEYS: log, used, done; ARGV: id, steps the caller has, entry, done (0|1), header, ttl ms
local length = redis.call('LLEN', KEYS[1])
if length == 0 then return {0} end
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[6])
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[5] then
  return with_status(3, redis.call('LRANGE', KEYS[1], 0, -1))
end
local steps = tonumber(ARGV[2])
if length ~= steps + 1 then
  return with_status(2, redis.call('LRANGE', KEYS[1], steps + 1, -1))
end
redis.call('RPUSH', KEYS[1], ARGV[3])
if ARGV[4] == '1' then redis.call('ZADD', KEYS[3], 'NX', now_ms(), ARGV[1]) end
return {1}
"""
)

READ = (
    _COMMON
    + """
-- KEYS: log, used; ARGV: id, start index, header the caller knows ('' for any), ttl ms
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
touch(KEYS[1], KEYS[2], ARGV[1], ARGV[4])
if ARGV[3] ~= '' and redis.call('LINDEX', KEYS[1], 0) ~= ARGV[3] then
  return with_status(3, redis.call('LRANGE', KEYS[1], 0, -1))
end
return with_status(1, redis.call('LRANGE', KEYS[1], tonumber(ARGV[2]), -1))
"""
)

DROP = """
-- KEYS: log, used, done; ARGV: id
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return {1}
"""

SCRIPTS = {"create": CREATE, "append": APPEND, "read": READ, "drop": DROP}
