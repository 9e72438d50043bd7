"""Replay the Dockerfile's install and start steps without Docker, then smoke-test the server.

    python scripts/replay_dockerfile.py [--keep] [--committed-only]

No Docker engine runs where this project is built, so this proves the image
another way. From a clean clone of the repo (plus uncommitted edits, unless
--committed-only) it interprets the Dockerfile in order:

* FROM python:X.Y-slim: a fresh virtual environment of Python X.Y stands in for
  the base image's site-packages; its bin/ comes first on PATH, then the directory
  of the interpreter it was made from (uv builds environments only from that one).
* ARG, ENV, WORKDIR, COPY (honouring .dockerignore), RUN, EXPOSE, USER,
  HEALTHCHECK, CMD as Docker would, with the image's absolute paths (WORKDIR)
  mapped into a sandbox directory and a RUN --mount=type=cache mapped to the
  host's uv cache (that is what makes the replay fast).
* Skipped, and reported: commands that need root (useradd, chown, ...),
  USER and COPY --chown (everything runs as the invoking user). Any other
  instruction stops the replay: it never silently ignores a step.

Then it starts CMD with HOST=127.0.0.1 and a free PORT (like `docker run -e`),
and checks GET /health, the HEALTHCHECK command, POST /reset {} and a whole
ServiceBench episode over HTTP, and that SIGTERM stops the server. It prints a
JSON summary on stdout and exits 0 only if every check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dockerfile_parser as df  # noqa: E402
import smoke_test_server as smoke  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ROOT_ONLY_COMMANDS = frozenset(
    {"useradd", "groupadd", "adduser", "addgroup", "usermod", "groupmod", "chown", "chgrp"}
)
BASE_IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The build machine's network and registry settings, which a Docker build also gets from its host.
PASSTHROUGH = re.compile(
    r"^(?:(?:HTTPS?|NO|ALL)_PROXY|(?:https?|no|all)_proxy|SSL_CERT_(?:FILE|DIR)|"
    r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|PIP_\w+|UV_(?:INDEX\w*|DEFAULT_INDEX|EXTRA_INDEX_URL|"
    r"NATIVE_TLS|OFFLINE|HTTP_TIMEOUT|CACHE_DIR))$"
)


def log(message: str) -> None:
    print(f"[replay] {message}", file=sys.stderr, flush=True)


class ReplayError(Exception):
    """A step of the Dockerfile, or a check of the started server, failed."""


def clean_checkout(repo: Path, dest: Path, committed_only: bool) -> None:
    """`git clone` of `repo` into `dest`, plus the working tree's uncommitted (not ignored) edits."""

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)

    if git("rev-parse", "--git-dir").returncode != 0:
        raise ReplayError(f"{repo} is not a git repository: the replay starts from a clean clone")
    has_commit = git("rev-parse", "--verify", "-q", "HEAD").returncode == 0
    if has_commit:
        subprocess.run(["git", "clone", "--quiet", str(repo), str(dest)], check=True)
    else:
        dest.mkdir(parents=True)
    if committed_only:
        return
    changed = (
        git("diff", "--name-only", "--no-renames", "-z", "HEAD")
        if has_commit
        else git("ls-files", "-z")
    )
    untracked = git("ls-files", "-z", "--others", "--exclude-standard")
    for name in (changed.stdout + untracked.stdout).split("\0"):
        source = repo / name
        if name and source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
        elif name and not source.exists() and (dest / name).is_file():
            (dest / name).unlink()


def host_uv_cache() -> str:
    return os.environ.get("UV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "uv"
    )


class Replay:
    """Interprets one Dockerfile's instructions against a sandbox directory."""

    def __init__(self, context: Path, sandbox: Path, instructions: list[df.Instruction]) -> None:
        self.context, self.sandbox, self.instructions = context, sandbox, instructions
        self.rootfs = sandbox / "rootfs"
        self.env = {k: v for k, v in os.environ.items() if PASSTHROUGH.match(k)}
        self.env.update(HOME=str(sandbox / "home"), LANG="C.UTF-8")
        self.build_args: dict[str, str] = {}
        self.workdir = self.rootfs
        self.rootfs.mkdir(parents=True)
        (sandbox / "home").mkdir()
        self.path_map = self._path_map()
        self.cmd: list[str] = []
        self.healthcheck: list[str] = []
        self.exposed: list[str] = []
        self.skipped: list[str] = []

    def _path_map(self) -> list[tuple[str, str]]:
        """Image paths -> host paths: each WORKDIR into the sandbox, each cache mount to the uv cache."""
        mapping: dict[str, str] = {}
        for ins in self.instructions:
            if ins.keyword == "WORKDIR" and ins.value.startswith("/"):
                mapping[ins.value.rstrip("/")] = str(self.rootfs / ins.value.strip("/"))
            if ins.keyword == "RUN":
                for name, value in df.split_flags(ins.value)[0]:
                    fields = df.flag_fields(value)
                    if name == "mount" and fields.get("type") == "cache":
                        mapping[fields["target"].rstrip("/")] = host_uv_cache()
        return sorted(mapping.items(), key=lambda item: -len(item[0]))

    def to_host(self, text: str) -> str:
        for image_path, host_path in self.path_map:
            pattern = rf"(?<![\w.-]){re.escape(image_path)}(?=$|[/\s\"':])"
            text = re.sub(pattern, lambda _, path=host_path: path, text)
        return text

    def run(self) -> None:
        for ins in self.instructions:
            handler = getattr(self, "do_" + ins.keyword.lower(), None)
            if handler is None:
                raise ReplayError(f"line {ins.line}: {ins.keyword} is not supported by the replay")
            log(f"line {ins.line}: {ins.keyword} {ins.value[:90]}")
            handler(ins)

    def do_from(self, ins: df.Instruction) -> None:
        match = re.fullmatch(
            r"(?:docker\.io/(?:library/)?)?python:(\d+\.\d+)[\w.-]*(?:@\S+)?", ins.value.split()[0]
        )
        if match is None:
            raise ReplayError(f"line {ins.line}: only an official python:X.Y image can be replayed")
        version = match.group(1)
        same = f"{sys.version_info[0]}.{sys.version_info[1]}" == version
        python = sys.executable if same else shutil.which(f"python{version}")
        if python is None:
            raise ReplayError(f"no python{version} on this machine to stand in for {ins.value}")
        base = self.sandbox / "base-python"
        subprocess.run([python, "-m", "venv", str(base)], check=True)
        # uv builds environments only from a non-virtual interpreter: the venv's own base comes next.
        interpreter = subprocess.run(
            [python, "-c", "import sys; print(sys._base_executable)"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        self.env["PATH"] = f"{base / 'bin'}:{Path(interpreter).parent}:{BASE_IMAGE_PATH}"

    def do_arg(self, ins: df.Instruction) -> None:
        for name, value in df.env_pairs(ins.value):
            self.build_args[name] = df.expand(value, {**self.build_args, **self.env})

    def do_env(self, ins: df.Instruction) -> None:
        for name, value in df.env_pairs(ins.value):
            self.env[name] = df.expand(self.to_host(value), {**self.build_args, **self.env})

    def do_workdir(self, ins: df.Instruction) -> None:
        value = self.to_host(df.expand(ins.value, self.env))
        self.workdir = Path(value) if os.path.isabs(value) else self.workdir / value
        self.workdir.mkdir(parents=True, exist_ok=True)

    def do_user(self, ins: df.Instruction) -> None:
        self.skipped.append(f"line {ins.line}: USER {ins.value} (runs as the invoking user)")

    def do_copy(self, ins: df.Instruction) -> None:
        flags, rest = df.split_flags(ins.value)
        for name, value in flags:
            if name == "from":
                raise ReplayError(f"line {ins.line}: COPY --from is not supported by the replay")
            self.skipped.append(f"line {ins.line}: COPY --{name}={value}")
        *sources, dest = df.exec_form(rest) or rest.split()
        target = Path(self.to_host(df.expand(dest, self.env)))
        target = target if target.is_absolute() else self.workdir / target
        into_directory = dest.endswith("/") or dest in (".", "./") or len(sources) > 1
        visible = df.context_files(self.context)
        for source in sources:
            wanted = os.path.normpath(source).lstrip("/")
            if wanted == ".":
                picked = {name: target / name for name in visible}
            elif wanted in visible:
                picked = {wanted: target / Path(wanted).name if into_directory else target}
            else:
                picked = {
                    n: target / n[len(wanted) + 1 :] for n in visible if n.startswith(wanted + "/")
                }
            if not picked:
                raise ReplayError(
                    f"line {ins.line}: COPY source {source!r} is not in the build context"
                )
            for name, out in picked.items():
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.context / name, out)

    def do_run(self, ins: df.Instruction) -> None:
        _, command = df.split_flags(ins.value)
        parts = [part.strip() for part in re.split(r"\s&&\s", command)]
        kept = [p for p in parts if p.split()[0] not in ROOT_ONLY_COMMANDS]
        self.skipped += [f"line {ins.line}: {p}" for p in parts if p not in kept]
        if not kept:
            return
        env = {**self.build_args, **self.env}
        done = subprocess.run(
            ["/bin/sh", "-c", self.to_host(" && ".join(kept))],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise ReplayError(
                f"line {ins.line}: RUN failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )

    def do_expose(self, ins: df.Instruction) -> None:
        self.exposed += ins.value.split()

    def do_healthcheck(self, ins: df.Instruction) -> None:
        self.healthcheck = [self.to_host(arg) for arg in df.healthcheck(ins.value)[1]]

    def do_cmd(self, ins: df.Instruction) -> None:
        self.cmd = [self.to_host(arg) for arg in df.command_argv(ins.value)]

    def do_label(self, ins: df.Instruction) -> None:
        """Labels are metadata only."""


# ----------------------------------------------------------------------------- the started server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_and_check(replay: Replay) -> dict[str, Any]:
    """Run CMD like `docker run -e HOST=127.0.0.1 -e PORT=<free>`, smoke-test it, run HEALTHCHECK, stop it."""
    port = free_port()
    env = {**replay.env, "HOST": "127.0.0.1", "PORT": str(port)}
    log(f"CMD {replay.cmd} with HOST=127.0.0.1 PORT={port}")
    server_log = replay.sandbox / "server.log"
    with open(server_log, "wb") as out:
        server = subprocess.Popen(
            replay.cmd, cwd=replay.workdir, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        summary = smoke.check_server(f"http://127.0.0.1:{port}", lambda: server.poll() is None)
        probe = subprocess.run(
            replay.healthcheck,
            cwd=replay.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            raise ReplayError(f"HEALTHCHECK exited {probe.returncode}: {probe.stderr[-2000:]}")
        summary["healthcheck_exit_code"] = probe.returncode
    except (smoke.SmokeTestError, ReplayError, OSError) as exc:
        raise ReplayError(
            f"{exc}\n--- server log ---\n{server_log.read_text(errors='replace')[-3000:]}"
        ) from None
    finally:
        server.terminate()
        try:
            exit_code = server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise ReplayError("the server ignored SIGTERM for 15 s") from None
    # uvicorn finishes its graceful shutdown, then re-raises SIGTERM: an exit "by signal 15" is normal.
    summary["sigterm"] = {
        "exit_code": exit_code,
        "graceful": "Finished server process" in server_log.read_text(errors="replace"),
    }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="the git repository to clone")
    parser.add_argument("--keep", action="store_true", help="keep the sandbox directory")
    parser.add_argument(
        "--committed-only", action="store_true", help="clone HEAD without uncommitted edits"
    )
    options = parser.parse_args(argv)
    sandbox = Path(tempfile.mkdtemp(prefix="replay-dockerfile-"))
    started = time.monotonic()
    try:
        context = sandbox / "clone"
        clean_checkout(options.repo.resolve(), context, options.committed_only)
        replay = Replay(
            context, sandbox, df.parse((context / "Dockerfile").read_text(encoding="utf-8"))
        )
        replay.run()
        summary = {
            "passed": True,
            "exposed": replay.exposed,
            "skipped": replay.skipped,
            **start_and_check(replay),
        }
    except (ReplayError, subprocess.CalledProcessError, OSError) as exc:
        summary = {"passed": False, "error": str(exc)}
    finally:
        if options.keep:
            log(f"sandbox kept at {sandbox}")
        else:
            shutil.rmtree(sandbox, ignore_errors=True)
    summary["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(summary, indent=2))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
