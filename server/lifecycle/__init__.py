"""An episode's life, the same for every transport: the episode base class, the operations
on live episodes, the store interface, who may act on an episode, and the warm-up.

episode.py is the base class both environments share; episodes.py the reset/step/find of
HTTP, WebSocket and MCP; sessions.py the interface every episode store (server/store/)
implements; owners.py who owns an episode and which client it counts for; warmup.py each
environment's one-time preparation. It stands on server/tasks/ and imports no transport.
"""
