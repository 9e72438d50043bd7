"""MCP, the third way in after HTTP and the WebSocket: one episode per MCP session.

server.py holds MCP's methods (tools, sessions, prompts); rpc.py the JSON-RPC 2.0 framing every
message obeys; sessions.py who speaks for which session; content.py the tool results and
prompts an agent reads. Its transports stand on it, never the other way: the Streamable HTTP
transport is server/transport/mcp_http.py, the WebSocket's `mcp` message server/transport/ws.py.
"""
