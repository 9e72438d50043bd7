"""compose.yaml and deploy/haproxy.cfg, proved without Docker: the facts the fleet needs.

Docker cannot run where the tests run, so the checks are: the facts read off the files
(Redis durable, every replica on that Redis, HAProxy reading our config, the ports
agreeing with the Dockerfile, no stickiness), HAProxy's own check of the config, and
tests/server/store/test_faults.py, which runs the same config in front of real servers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from haproxy_process import HAPROXY

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import dockerfile_parser as df  # noqa: E402

from servicebench_support_queue.server.settings import Settings  # noqa: E402
from servicebench_support_queue.server.store import open_store  # noqa: E402
from servicebench_support_queue.server.store.durable import DurableStore  # noqa: E402
from servicebench_support_queue.server.store.redis import RedisBackend  # noqa: E402

COMPOSE = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]
HAPROXY_CFG = (REPO / "deploy" / "haproxy.cfg").read_text(encoding="utf-8")
DOCKERFILE = df.parse((REPO / "Dockerfile").read_text(encoding="utf-8"))
IMAGE_CONFIG_PATH = "/usr/local/etc/haproxy/haproxy.cfg"
"""Where the official haproxy image reads its configuration."""


def directives(section: str) -> list[list[str]]:
    """The directive lines of one haproxy.cfg section (e.g. `backend replicas`), split."""
    lines = HAPROXY_CFG.splitlines()
    start = lines.index(section) + 1
    body = []
    for line in lines[start:]:
        if line and not line[0].isspace():
            break
        if line.strip() and not line.strip().startswith("#"):
            body.append(line.split())
    return body


def image_port() -> str:
    env: dict[str, str] = {}
    for ins in DOCKERFILE:
        if ins.keyword == "ENV":
            env.update(df.env_pairs(ins.value))
    return env["PORT"]


def test_redis_acknowledges_only_what_its_append_only_file_holds() -> None:
    redis = SERVICES["redis"]
    command = redis["command"]
    assert command[0] == "redis-server"
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--appendonly"] == "yes" and options["--appendfsync"] == "always"
    assert any(volume.endswith(":/data") for volume in redis["volumes"])  # the AOF outlives it
    assert redis["healthcheck"]["test"][-1] == "ping"


def test_every_replica_keeps_its_episodes_in_that_redis() -> None:
    app = SERVICES["app"]
    url = app["environment"]["EPISODE_STORE"]
    parts = urlsplit(url)
    assert parts.scheme == "redis" and parts.hostname == "redis"
    assert parts.port == 6379  # redis-server's default: the command sets no other
    assert "--port" not in SERVICES["redis"]["command"]
    store = open_store(Settings(episode_store=url), [])
    assert isinstance(store, DurableStore) and isinstance(store.backend, RedisBackend)
    assert app["depends_on"]["redis"]["condition"] == "service_healthy"
    assert app["deploy"]["replicas"] >= 2 and app["build"] == "."


def test_haproxy_runs_our_config_on_the_published_port() -> None:
    haproxy = SERVICES["haproxy"]
    assert f"./deploy/haproxy.cfg:{IMAGE_CONFIG_PATH}:ro" in haproxy["volumes"]
    assert directives("frontend episodes")[:1] == [["bind", ":8000"]]
    assert haproxy["ports"] == ["8000:8000"]
    assert "app" in haproxy["depends_on"]


def test_haproxy_reaches_every_replica_on_the_image_port_through_docker_dns() -> None:
    (template,) = [d for d in directives("backend replicas") if d[0] == "server-template"]
    _, _, slots, address, *options = template
    assert address == f"app:{image_port()}" and "app" in SERVICES
    assert SERVICES["app"]["expose"] == [image_port()]
    assert int(slots) >= SERVICES["app"]["deploy"]["replicas"]
    assert options[options.index("resolvers") + 1] == "docker" and "check" in options
    assert ["nameserver", "dns", "127.0.0.11:53"] in directives("resolvers docker")
    assert ["option", "httpchk", "GET", "/health"] in directives("backend replicas")


def test_no_sticky_sessions_every_request_goes_round_robin() -> None:
    backend = directives("backend replicas")
    assert ["balance", "roundrobin"] in backend
    sticky = {"cookie", "stick", "stick-table", "hash-type"}
    assert not [d for d in backend if d[0] in sticky]
    assert ["option", "redispatch"] in directives("defaults")


def test_each_client_counts_as_itself_behind_haproxy() -> None:
    """The fair share of the episode cap needs each client's address: HAProxy forwards it,
    and the replicas, which only HAProxy reaches, trust it (uvicorn's proxy headers)."""
    assert ["option", "forwardfor"] in directives("defaults")
    app = SERVICES["app"]
    assert app["environment"]["FORWARDED_ALLOW_IPS"] == "*" and "ports" not in app


def test_the_image_tags_are_pinned_to_the_versions_the_tests_run() -> None:
    assert re.fullmatch(r"redis:7\.\d+-alpine", SERVICES["redis"]["image"])
    haproxy = re.fullmatch(r"haproxy:(\d+\.\d+)-alpine", SERVICES["haproxy"]["image"])
    assert haproxy
    if HAPROXY is not None:
        version = subprocess.run([HAPROXY, "-v"], capture_output=True, text=True).stdout
        assert f"version {haproxy.group(1)}." in version


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed")
def test_haproxy_accepts_the_config() -> None:
    checked = subprocess.run(
        [HAPROXY, "-c", "-f", str(REPO / "deploy" / "haproxy.cfg")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
