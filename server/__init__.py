"""The server's shared core: the app, its transports, sessions and the episode base.

Nothing here imports an environment except app.py, which wires in both
(servicebench/ and support_queue/).
"""
