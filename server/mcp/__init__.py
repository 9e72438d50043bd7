"""MCP, the third way in after HTTP and the WebSocket: one episode per MCP session.

server.py holds MCP's methods (tools, sessions, prompts); rpc.py the JSON-RPC 2.0 framing every
message obeys; http.py the Streamable HTTP transport (the WebSocket's `mcp` message is
server/transport/ws.py); sessions.py who speaks for which session; content.py the tool results and
prompts an agent reads.
"""
