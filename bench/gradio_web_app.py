"""Our app with OpenEnv 0.10's Gradio web interface for ServiceBench mounted at /openenv-web.

    uvicorn bench.gradio_web_app:app --app-dir .       # what bench/web_interface_bench.py serves

Built the way `ENABLE_WEB_INTERFACE=true` makes OpenEnv's `create_web_interface_app`
build it (a `WebInterfaceManager`, the playground Blocks, OpenEnv's theme and CSS),
beside our own routes rather than instead of them, only to measure what it costs.
"""

from __future__ import annotations

from typing import Any


def build() -> Any:
    """Our app with OpenEnv's Gradio interface for ServiceBench mounted beside it."""
    import gradio as gr
    from openenv.core.env_server import web_interface as oe

    from servicebench_support_queue.models import ServiceBenchAction, ServiceBenchObservation
    from servicebench_support_queue.server.app import create_app
    from servicebench_support_queue.server.servicebench.environment import (
        ServiceBenchEnvironment,
    )

    app = create_app()
    metadata = ServiceBenchEnvironment.environment_metadata()
    manager = oe.WebInterfaceManager(
        ServiceBenchEnvironment, ServiceBenchAction, ServiceBenchObservation, metadata
    )
    blocks = oe._build_gradio_blocks(
        manager,
        oe._extract_action_fields(ServiceBenchAction),
        metadata,
        oe._is_chat_env(ServiceBenchAction),
        oe.get_quick_start_markdown(metadata, ServiceBenchAction, ServiceBenchObservation),
        display_title=oe.get_gradio_display_title(metadata),
        gradio_builder=None,
        custom_tab_name="Custom",
        custom_tab_primary=False,
        show_default_tab=True,
    )
    return gr.mount_gradio_app(
        app, blocks, path="/openenv-web", theme=oe.OPENENV_GRADIO_THEME, css=oe.OPENENV_GRADIO_CSS
    )


app = build()
