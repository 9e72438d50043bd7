"""The small human page at GET /: what this is, the tasks, and curl to copy."""

from __future__ import annotations

from html import escape

from ..models import TaskCard

_CURL = """curl -s -X POST http://localhost:8000/reset -H 'Content-Type: application/json' -d '{"task_id": 1}'
curl -s -X POST http://localhost:8000/step -H 'Content-Type: application/json' \\
  -d '{"service": "user", "endpoint": "/users/lookup", "method": "GET", "params": {"email": "jane.doe@example.com"}}'
curl -s http://localhost:8000/state

curl -s -X POST http://localhost:8000/reset -H 'Content-Type: application/json' -d '{"task_id": "easy_inbox_cleanup"}'
curl -s http://localhost:8000/tasks"""


def render_home(cards: list[TaskCard]) -> str:
    rows = "\n".join(
        f"<tr><td>{escape(c.env)}</td><td><code>{escape(c.id)}</code></td><td>{escape(c.title)}</td>"
        f"<td>{escape(c.difficulty)}</td><td>{c.max_steps}</td><td>{escape(c.description)}</td></tr>"
        for c in cards
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ServiceBench + Support Queue (OpenEnv)</title>
<style>body{{font-family:system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;line-height:1.45}}
table{{border-collapse:collapse;width:100%}}
td,th{{border:1px solid #ccc;padding:.35rem;text-align:left;vertical-align:top}}
pre{{background:#f4f4f4;padding:1rem;overflow:auto}}</style></head>
<body>
<h1>ServiceBench + Support Queue</h1>
<p>An <a href="https://github.com/meta-pytorch/OpenEnv">OpenEnv</a> environment server for training and
evaluating LLM agents. <b>ServiceBench</b>: resolve customer requests by calling three interconnected
microservices (users, orders, inventory) in the right order. <b>Support Queue</b>: triage SaaS support
tickets (priority, queue, disposition, summary, safe first reply).</p>
<p>Endpoints: <code>POST /reset</code>, <code>POST /step</code>, <code>GET /state</code>, <code>GET /tasks</code>,
<code>GET /health</code>, <code>GET /schema</code>, <code>GET /metadata</code>, <code>POST /mcp</code>;
each environment also under <code>/servicebench</code> and <code>/support_queue</code> with a WebSocket at
<code>/ws</code>. API docs: <a href="/docs">/docs</a>.</p>
<h2>Tasks</h2>
<table><tr><th>env</th><th>task_id</th><th>title</th><th>difficulty</th><th>step budget</th><th>description</th></tr>
{rows}
</table>
<h2>Try it</h2>
<pre>{escape(_CURL)}</pre>
</body></html>"""
