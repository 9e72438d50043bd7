"""Markdown tables of one bench run's results (bench/results/latest.md, pasted into BENCHMARKS.md)."""

from __future__ import annotations

from typing import Any

from bench import store_bench

OURS, OPENENV, BARE = "servicebench", "openenv-reference", "bare-fastapi"
WS_FLOOR, WS_IDEAL = "uvicorn-ws-floor", "minimal-servicebench-ws"


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _check(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _http_rounds(name: str, section: dict[str, Any]) -> list[str]:
    metric = section["metric"]
    unit = "req/s" if metric == "requests_per_s" else "steps/s"
    lines = [
        f"| {name} round | {OURS} | {OPENENV} | {BARE} | ours / bare | ours / reference |",
        "|---|---|---|---|---|---|",
    ]
    for number, round_ in enumerate(section["rounds"], 1):
        cells = [
            f"{_rate(round_[t][metric])} {unit} (p50 {round_[t]['p50_ms']:.1f} / p99 "
            f"{round_[t]['p99_ms']:.1f} ms, {round_[t]['errors']} errors)"
            for t in (OURS, OPENENV, BARE)
        ]
        lines.append(
            f"| {number} | {' | '.join(cells)} | {round_[OURS][metric] / round_[BARE][metric]:.2f} | "
            f"{round_[OURS][metric] / round_[OPENENV][metric]:.2f} |"
        )
    return lines


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    out = [
        "## Machine",
        "",
        f"- {machine['nproc']} CPUs ({machine['cpu']}), {machine['memory_gb']} GB, Linux {machine['kernel']}",
        f"- Python {machine['python']}; "
        + ", ".join(f"{k} {v}" for k, v in machine["packages"].items()),
        f"- {machine['wrk']}",
        f"- load average at start {machine['loadavg_start'][0]:.1f}, at end "
        f"{machine.get('loadavg_end', [float('nan')])[0]:.1f} (the machine is shared)",
        "",
    ]
    summary = [
        "## Summary (ratios are medians of the per-round ratios of this run)",
        "",
        "| # | measure | result | target | met |",
        "|---|---|---|---|---|",
    ]
    if "http" in results:
        mix, single = results["http"]["episode_mix"], results["http"]["single_step"]
        summary.append(
            f"| 1 | HTTP episode mix, req/s vs bare FastAPI route / vs OpenEnv reference | "
            f"{mix['vs_bare']:.2f}x / {mix['vs_openenv']:.2f}x | >= 0.9x bare | "
            f"{_check(mix['vs_bare'] >= 0.9)} |"
        )
        summary.append(
            f"| 2 | HTTP single steps, steps/s vs bare / vs reference | {single['vs_bare']:.2f}x / "
            f"{single['vs_openenv']:.2f}x | (no target) | - |"
        )
    if "ws" in results:
        for load in results["ws"]["by_connections"]:
            summary.append(
                f"| 3 | WebSocket steps/s vs OpenEnv reference /ws, {load['connections']} connections "
                f"(the minimal ServiceBench WebSocket server, bench/ws_ideal.py: "
                f"{load['minimal_vs_openenv']:.2f}x) | {load['vs_openenv']:.2f}x | "
                f">= 2.5x | {_check(load['vs_openenv'] >= 2.5)} |"
            )
    if "asgi" in results:
        http, ws = results["asgi"]["http_us_per_request"], results["asgi"]["ws_us_per_message"]
        summary.append(
            f"| 3b | server CPU without sockets: HTTP µs/request ours / bare / reference; WebSocket "
            f"µs/message ours / reference | {http[OURS]:.0f} / {http[BARE]:.0f} / {http[OPENENV]:.0f}; "
            f"{ws[OURS]:.0f} / {ws[OPENENV]:.0f} (reference / ours: {ws[OPENENV] / ws[OURS]:.2f}x) | - | - |"
        )
    if "inprocess" in results:
        rate = results["inprocess"]["episode_mix"]["env_step_per_s"]
        summary.append(
            f"| 4 | in-process env.step (optimal paths) | {_rate(rate)} steps/s | >= 50,000 | "
            f"{_check(rate >= 50_000)} |"
        )
    if "memory" in results:
        memory = results["memory"]
        for row in memory["memory"]:
            per = row["bytes_per_episode"]
            summary.append(
                f"| 5 | RSS per live episode at {row['live_episodes']:,} | {per / 1024:.2f} KB "
                f"(RSS {row['rss_mb']:.0f} MB) | <= 10 KB | {_check(per <= 10 * 1024)} |"
            )
        summary.append(
            f"| 6 | p99 step latency, {memory['most_live']:,} vs 10 live episodes | "
            f"{memory['p99_ratio']:.2f}x | <= 1.10x | {_check(memory['p99_ratio'] <= 1.10)} |"
        )
    if "sessions" in results:
        s = results["sessions"]
        ok = s["errors"] == 0 and s["connect_failures"] == 0 and s["p99_ms"] <= 50
        summary.append(
            f"| 7 | {s['sessions']:,} WebSocket sessions, ~1 msg/s each, one worker | "
            f"{s['errors'] + s['connect_failures']} errors, p99 {s['p99_ms']:.1f} ms | "
            f"0 errors, p99 <= 50 ms | {_check(ok)} |"
        )
    if "startup" in results:
        st = results["startup"]
        summary.append(
            f"| 8 | start to healthy (median) | {st[OURS]['median_s']:.2f} s (reference "
            f"{st[OPENENV]['median_s']:.2f} s, bare {st[BARE]['median_s']:.2f} s) | - | - |"
        )
        if "idle_rss_mb" in st[OURS]:  # results recorded before it was measured have no idle RSS
            summary.append(
                f"| 8b | idle RSS after start (median) | {st[OURS]['idle_rss_mb']:.0f} MB (reference "
                f"{st[OPENENV]['idle_rss_mb']:.0f} MB, bare {st[BARE]['idle_rss_mb']:.0f} MB) | - | - |"
            )
    if "stores" in results:
        for run_ in results["stores"]["by_connections"]:
            ratios, two, n = run_["vs_memory"], run_["two_workers_vs_one"], run_["connections"]
            summary += [
                f"| 9 | HTTP episode mix, {n} connections: Redis store vs memory, one worker "
                f"each (SQLite: {ratios['sqlite']:.2f}x) | {ratios['redis']:.2f}x | >= 0.75x | "
                f"{_check(ratios['redis'] >= 0.75)} |",
                f"| 9b | HTTP episode mix, {n} connections: Redis store, two workers vs one | "
                f"{two:.2f}x | > 1.5x | {_check(two > 1.5)} |",
            ]
    out += summary + [""]
    out += _details(results)
    if "stores" in results:
        out += store_bench.render(results["stores"])
    return "\n".join(out) + "\n"


def _details(results: dict[str, Any]) -> list[str]:
    out = ["## Details", ""]
    if "http" in results:
        for name, section in results["http"].items():
            out += _http_rounds(name.replace("_", " "), section) + [""]
    if "ws" in results:
        out += [
            f"WebSocket load generator: {results['ws']['generator']}. Server CPU is µs per message "
            f"(all threads, from /proc).",
            "",
        ]
        for load in results["ws"]["by_connections"]:
            out += [
                f"| WebSocket round, {load['connections']} connections | {OURS} steps/s | {OPENENV} steps/s "
                f"| ratio | {WS_IDEAL} steps/s (ratio) | server CPU µs/message: {OURS} / {OPENENV} / "
                f"{WS_IDEAL} / {WS_FLOOR} |",
                "|---|---|---|---|---|---|",
            ]
            for number, r in enumerate(load["rounds"], 1):
                cpu = " / ".join(
                    f"{r[name]['server_cpu_us_per_message']:.0f}"
                    for name in (OURS, OPENENV, WS_IDEAL, WS_FLOOR)
                )
                reference = r[OPENENV]["steps_per_s"]
                out.append(
                    f"| {number} | {_rate(r[OURS]['steps_per_s'])} (p99 {r[OURS]['p99_ms']:.1f} ms, "
                    f"{r[OURS]['errors']} errors) | {_rate(reference)} (p99 {r[OPENENV]['p99_ms']:.1f} ms) "
                    f"| {r[OURS]['steps_per_s'] / reference:.2f} | {_rate(r[WS_IDEAL]['steps_per_s'])} "
                    f"({r[WS_IDEAL]['steps_per_s'] / reference:.2f}) | {cpu} |"
                )
            out.append("")
    if "inprocess" in results:
        out += ["| in-process | env.step/s | env.step + JSON/s | reset/s |", "|---|---|---|---|"]
        for name, r in results["inprocess"].items():
            out.append(
                f"| {name.replace('_', ' ')} | {_rate(r['env_step_per_s'])} | "
                f"{_rate(r['env_step_encoded_per_s'])} | {_rate(r['env_reset_per_s'])} |"
            )
        out.append("")
    if "memory" in results:
        memory = results["memory"]
        out += [
            f"Baseline RSS {memory['baseline_rss_mb']:.0f} MB.",
            "",
            "| latency round | live | p50 ms | p99 ms | max ms | steps |",
            "|---|---|---|---|---|---|",
        ]
        for number, r in enumerate(memory["latency_rounds"], 1):
            for live, row in r.items():
                out.append(
                    f"| {number} | {int(live):,} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
                    f"{row['max_ms']:.1f} | {row['samples']:,} |"
                )
        out.append("")
    if "sessions" in results:
        s = results["sessions"]
        out += [
            f"WebSocket sessions: {s['sessions']:,} connected ({s['connect_failures']} failed), "
            f"{s['messages']:,} messages ({s['messages_per_s']:,.0f}/s), {s['errors']} errors, "
            f"p50 {s['p50_ms']:.2f} / p90 {s['p90_ms']:.2f} / p99 {s['p99_ms']:.2f} / max "
            f"{s['max_ms']:.1f} ms.",
            "",
        ]
    if "startup" in results:
        out += [
            "Start to healthy (s): "
            + "; ".join(
                f"{name} {', '.join(f'{v:.2f}' for v in r['runs_s'])}"
                for name, r in results["startup"].items()
            ),
            "",
        ]
    return out
