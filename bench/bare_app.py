"""The least a FastAPI server can start with: one `GET /health` route, nothing else imported.

The peer of `bench/start_to_healthy.py` (the shared baselines' `bare` app sits in a module that
imports OpenEnv's server, so its start-up pays for OpenEnv and Gradio too).
"""

from fastapi import FastAPI

app = FastAPI()


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "healthy"}
