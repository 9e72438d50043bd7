"""text/safety/rules.py `compiled`: the rules are not compiled when the app is imported or
built (seconds of CPU off the start path), but by SupportQueueEnvironment.warm() or, without
it, by the first grading; once per process, whichever threads ask at the same time. Each
case runs in a fresh interpreter, where nothing has compiled them yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PACKAGE = "servicebench_support_queue"
RULES = f"{PACKAGE}.server.support_queue.text.safety.rules"


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_importing_and_building_the_app_compiles_no_rule() -> None:
    out = run(
        f"""
        import {PACKAGE}.server.app as app
        from {RULES} import COMPILED
        print(len(COMPILED))
        app.create_app()
        print(len(COMPILED))
        """
    )
    assert out.split() == ["0", "0"]


def test_grading_without_warm_compiles_the_rules_on_first_use() -> None:
    out = run(
        f"""
        import {PACKAGE}.server.app
        from {PACKAGE}.models import SupportQueueAction
        from {PACKAGE}.server.support_queue.environment import SupportQueueEnvironment
        from {PACKAGE}.server.support_queue.proof import gold_action
        from {PACKAGE}.server.support_queue.tasks import TASKS
        from {RULES} import COMPILED
        env = SupportQueueEnvironment()
        env.reset(task_id=TASKS[0].card.id)
        action = gold_action(TASKS[0].tickets[0]).model_dump()
        action["response"] = "Thanks for reaching out. Please reply with your password."
        observation = env.step(SupportQueueAction(**action))
        print(len(COMPILED))
        print(*[hit["rule"] for hit in observation.last_feedback["unsafe"]["hits"]])
        """
    )
    count, hits = out.splitlines()
    assert count == "1"
    assert "asks_for_secret" in hits.split()


def test_warm_compiles_them_once_whichever_threads_ask_together() -> None:
    out = run(
        f"""
        import threading, time
        from {PACKAGE}.server.support_queue.environment import SupportQueueEnvironment
        from {RULES} import COMPILED, CompiledRules, compiled
        loads = []
        real = CompiledRules.load.__func__

        def slow_load(cls):
            loads.append(1)
            time.sleep(0.2)  # wide open for a second thread to compile too, were it allowed
            return real(cls)

        CompiledRules.load = classmethod(slow_load)
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(compiled())) for _ in range(6)]
        threads.append(threading.Thread(target=SupportQueueEnvironment.warm))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(len(loads), len(COMPILED), len({{id(found) for found in seen}}))
        """
    )
    assert out.split() == ["1", "1", "1"]


def test_a_frames_pattern_compiles_when_a_reply_first_reaches_it() -> None:
    """Loading the rules compiles no frame's pattern; grading compiles only those of the frames
    the reply's words reach (text/safety/frames.py `LazyPattern`), and the same frame's
    pattern finds the same matches compiled or not."""
    out = run(
        f"""
        from {RULES} import compiled
        from {PACKAGE}.server.support_queue.text.safety.verdict import verdict
        rules = compiled()
        frames = [frame for rule in rules.rules for frame in rule.frames]
        print(sum(frame.pattern._compiled is not None for frame in frames))
        print(bool(verdict("Please reply with your password.", "", ())))
        compiled_now = sum(frame.pattern._compiled is not None for frame in frames)
        print(0 < compiled_now < len(frames))
        """
    )
    assert out.split() == ["0", "True", "True"]
