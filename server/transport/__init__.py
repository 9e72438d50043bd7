"""The HTTP and WebSocket edge: the routes, and what every request passes through on its way in.

http_api.py builds a scope's HTTP surface, fast_path.py answers POST /reset and /step in
plain ASGI, task_api.py serves OpenEnv's Task API, ws.py the WebSocket; encoding.py writes
their results (every untrusted body is parsed by server/strict_json.py), body_limit.py bounds
a body, origins.py holds the one Origin rule, log_redaction.py keeps credentials out of the logs.
mcp_http.py carries MCP (server/mcp/, the protocol, which imports nothing from here) over HTTP.
"""
