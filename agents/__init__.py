"""The agents `inference.py` runs: LLM agents over an OpenAI-compatible endpoint and the no-model fallbacks.

Kept out of the environment server: it talks to the server over HTTP only
(through `client.py`), like any other user of it.
"""
