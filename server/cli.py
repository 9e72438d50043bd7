"""`servicebench-support-queue-server`: serve the app with uvicorn, from flags or the environment.

    servicebench-support-queue-server --port 8000 --workers 2 --store sqlite:////data/episodes.db

Each flag has an environment variable (HOST, PORT, WEB_CONCURRENCY as uvicorn names it,
EPISODE_STORE); a flag wins over its variable. Everything is checked before uvicorn starts: a
value that cannot work is one line on stderr and exit status 2, as for any bad usage. The app
itself is imported only then (so `--help` answers at once), by uvicorn, in each worker.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

APP = "servicebench_support_queue.server.app:app"
PROG = "servicebench-support-queue-server"
USAGE_STATUS = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (argparse prints the whole usage block first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_STATUS, f"{self.prog}: error: {message} (see --help)\n")


def _port(text: str) -> int:
    port = _integer(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return port


def _workers(text: str) -> int:
    workers = _integer(text)
    if workers < 1:
        raise argparse.ArgumentTypeError(f"at least 1 worker, got {text!r}")
    return workers


def _integer(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _host(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the host is empty")
    return text.strip()


OPTIONS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    # flag: (its environment variable, the check that converts it, the default)
    "host": ("HOST", _host, "0.0.0.0"),
    "port": ("PORT", _port, "8000"),
    "workers": ("WEB_CONCURRENCY", _workers, "1"),
    "store": ("EPISODE_STORE", str.strip, "memory"),
}


def parser() -> argparse.ArgumentParser:
    """The command line; a flag left out takes its environment variable, then the default."""
    cli = _Parser(
        prog=PROG,
        description="Serve ServiceBench and Support Queue (OpenEnv's HTTP, WebSocket and MCP "
        "routes, the playground at /web) with uvicorn.",
        epilog="The other settings are environment variables only (docs/sessions-and-limits.md): "
        "MAX_LIVE_EPISODES, EPISODE_TTL_SECONDS, REQUIRE_EPISODE_ID, MAX_BODY_BYTES, "
        "MAX_WS_SESSIONS, HEADER_TIMEOUT_SECONDS, BODY_TIMEOUT_SECONDS, SEND_TIMEOUT_SECONDS, "
        "WS_IDLE_TIMEOUT_SECONDS, CORS_ORIGINS, TELEMETRY.",
    )
    helps = {
        "host": "address to listen on",
        "port": "port to listen on (0: any free port)",
        "workers": "uvicorn worker processes; more than one only with a SQLite or Redis "
        "store, which the workers share",
        "store": "where episodes live: memory, sqlite:///ABSOLUTE/PATH.db, or a Redis URL "
        "(redis://HOST:PORT/DB, rediss://..., unix:///PATH)",
    }
    for name, (variable, check, default) in OPTIONS.items():
        cli.add_argument(
            f"--{name}",
            type=check,
            metavar="URL" if name == "store" else None,
            help=f"{helps[name]} (default: ${variable}, else {default})",
        )
    return cli


def resolve(
    cli: argparse.ArgumentParser, args: argparse.Namespace, environ: Mapping[str, str]
) -> dict[str, Any]:
    """Each option's value: the flag's, else its variable's (checked alike), else the default."""
    values = {}
    for name, (variable, check, default) in OPTIONS.items():
        value = getattr(args, name)
        if value is None:
            raw = environ.get(variable, "").strip() or default
            try:
                value = check(raw)
            except argparse.ArgumentTypeError as exc:
                cli.error(f"{variable}={raw!r} (its --{name}): {exc}")
        values[name] = value
    return values


def main(argv: Sequence[str] | None = None) -> None:
    """Parse and check the command line and the settings, then hand the app to uvicorn."""
    cli = parser()
    args = cli.parse_args(argv)
    options = resolve(cli, args, os.environ)
    from .settings import Settings
    from .store import check_store_url

    try:
        check_store_url(options["store"])
    except ValueError as exc:
        cli.error(f"argument --store: {exc}" if args.store is not None else str(exc))
    os.environ["EPISODE_STORE"] = options["store"]  # the app (and every worker) reads it there
    try:
        settings = Settings.from_env(os.environ)
    except ValueError as exc:
        cli.error(str(exc))

    import uvicorn

    from .protocols import uvicorn_options

    logging.basicConfig(level=logging.INFO)
    uvicorn.run(
        APP,
        host=options["host"],
        port=options["port"],
        workers=options["workers"],
        timeout_graceful_shutdown=10,
        **uvicorn_options(settings),  # the door's protocols and limits (server/protocols/)
    )


if __name__ == "__main__":
    main(sys.argv[1:])
