"""The server's shared core: the app, its transports, sessions and the episode base.

tasks/ is what a reset plays (seeds, splits, variants), lifecycle/ an episode's life on top
of it (the episode base, the operations every transport shares, the store interface),
transport/ the HTTP and WebSocket edge; store/, mcp/, protocols/ and web/ sit beside them.
Nothing here imports an environment except app.py, which wires in both
(servicebench/ and support_queue/).
"""
