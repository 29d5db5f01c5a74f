"""``python -m benchmarks [SUITE ...] [--json] [--quick] [--uvloop]``: print medians and ratios.

Exit status is 0 even when a ratio misses its target: benchmarks inform, they
do not gate (the machine is noisy). ``--quick`` divides the work for a smoke run.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import msgspec

from ._harness import CaseResult, run_case

SUITES: dict[str, str] = {
    "framing": "benchmarks.framing",
    "roundtrip": "benchmarks.roundtrip",
    "host_agent": "benchmarks.host_agent",
    "desktop": "benchmarks.desktop",
    "connector": "benchmarks.connector",
    "herdr": "benchmarks.herdr",
    "herdr_terminal": "benchmarks.herdr_terminal",
    "drivers": "benchmarks.drivers",
    "agents_host": "benchmarks.agents_host",
    "proxy": "benchmarks.proxy",
    "servers": "benchmarks.servers",
    "clients": "benchmarks.clients",
    "memory": "benchmarks.memory",
}
"""Suite name -> module exposing ``cases(quick: bool) -> list[Case]``."""


def _use_uvloop() -> bool:
    """Make uvloop the loop of every later ``anyio.run`` on asyncio; ``False`` if not installed.

    The cases call ``anyio.run`` themselves; with no ``loop_factory`` anyio's
    asyncio backend asks the event loop policy for a new loop, so setting
    uvloop's policy once covers every case (baseline and candidate alike).
    """
    try:
        import uvloop
    except ImportError:
        return False
    import asyncio

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("suites", nargs="*", choices=[[], *SUITES], default=[], metavar="SUITE")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run")
    parser.add_argument(
        "--uvloop",
        action="store_true",
        help="run every asyncio case on uvloop (the `fast` extra); compare with a run without",
    )
    args = parser.parse_args(argv)
    if args.uvloop and not _use_uvloop():
        sys.stderr.write(
            "python -m benchmarks: --uvloop needs uvloop: pip install 'shedproto[fast]'\n"
        )
        return 2
    results: list[CaseResult] = []
    for name in args.suites or list(SUITES):
        module = importlib.import_module(SUITES[name])
        for case in module.cases(args.quick):
            result = run_case(case)
            results.append(result)
            if not args.json:
                scale, label = {"bytes": (1.0, "B"), "count": (1.0, "")}.get(
                    result.measure, (1e6, "us")
                )
                per_unit_b = result.baseline_median_s / result.units * scale
                per_unit_c = result.candidate_median_s / result.units * scale
                verdict = "meets" if result.meets_target else "MISSES"
                print(
                    f"{result.name:<58} ratio {result.ratio:5.2f}"
                    f" ({verdict} >= {result.target:.2f})"
                    f"  median/{result.unit}: baseline {per_unit_b:8.2f} {label},"
                    f" candidate {per_unit_c:8.2f} {label}  [n={result.repeat}]",
                    flush=True,
                )
    if args.json:
        sys.stdout.write(msgspec.json.encode(results).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
