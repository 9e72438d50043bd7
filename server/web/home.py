"""The small human page at GET /: what this is, the tasks, a link to the playground, curl to copy.

The curl lines name this server as the request reached it (`request.base_url`), and
web/home.js rewrites them from the page's own address, which also knows the scheme a
TLS-terminating proxy (a Hugging Face Space) hides from the server. No inline script
or style: the page runs under the same Content-Security-Policy as the playground.
"""

from __future__ import annotations

from html import escape

from ...models import TaskCard

_CURL = """curl -s -X POST {base}/reset -H 'Content-Type: application/json' -d '{"task_id": 1}'
curl -s -X POST {base}/step -H 'Content-Type: application/json' \\
  -d '{"service": "user", "endpoint": "/users/lookup", "method": "GET", "params": {"email": "jane.doe@example.com"}}'
curl -s {base}/state

curl -s -X POST {base}/reset -H 'Content-Type: application/json' -d '{"task_id": "easy_inbox_cleanup"}'
curl -s {base}/tasks"""


def task_table(cards: list[TaskCard]) -> str:
    rows = "\n".join(
        f"<tr><td>{escape(c.env)}</td><td><code>{escape(c.id)}</code></td><td>{escape(c.title)}</td>"
        f"<td>{escape(c.difficulty)}</td><td>{c.max_steps}</td><td>{escape(c.description)}</td></tr>"
        for c in cards
    )
    return f"""<div class="table-wrap"><table>
<caption>Every task (also as JSON at <a href="tasks">/tasks</a>)</caption>
<tr><th scope="col">env</th><th scope="col">task_id</th><th scope="col">title</th>
<th scope="col">difficulty</th><th scope="col">step budget</th><th scope="col">description</th></tr>
{rows}
</table></div>"""


def render_home(table: str, base_url: str) -> str:
    """The page, for a request that reached the server at `base_url` (no trailing slash)."""
    base = f'<span class="base">{escape(base_url)}</span>'
    curl = escape(_CURL).replace("{base}", base)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>ServiceBench + Support Queue (OpenEnv)</title>
<link rel="stylesheet" href="web/site.css">
<script src="web/home.js" defer></script>
</head>
<body class="home">
<main>
<h1>ServiceBench + Support Queue</h1>
<p>An <a href="https://github.com/meta-pytorch/OpenEnv">OpenEnv</a> environment server for training and
evaluating LLM agents. <b>ServiceBench</b>: resolve customer requests by calling three interconnected
microservices (users, orders, inventory) in the right order. <b>Support Queue</b>: triage SaaS support
tickets (priority, queue, disposition, summary, safe first reply).</p>
<p class="cta"><a href="web/">Play a task in your browser: the playground</a></p>
<p>Endpoints: <code>POST /reset</code>, <code>POST /step</code>, <code>GET /state</code>, <code>GET /tasks</code>,
<code>GET /health</code>, <code>GET /schema</code>, <code>GET /metadata</code>, <code>POST /mcp</code>;
each environment also under <code>/servicebench</code> and <code>/support_queue</code> with a WebSocket at
<code>/ws</code>. API docs: <a href="docs">/docs</a> (<a href="redoc">ReDoc</a>).</p>
<h2>Tasks</h2>
{table}
<h2>Try it</h2>
<pre id="curl">{curl}</pre>
</main>
</body></html>"""
