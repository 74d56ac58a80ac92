"""Render the documentation's benchmarks page from the latest results.

Each benchmark script writes ``benchmarks/results/<name>.json``: the figures,
where they were measured, the command that ran, and the report it printed
(every figure beside its target and the ratio measured in the same run). This
script writes ``docs/benchmarks.md`` from those files and nothing else, so the
page says only what a run measured. ``--check`` fails when the page differs from
what the results give (a test runs it).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"

# The order of the page: the figures a user asks about first.
ORDER = ("turn", "instructions", "reducer", "growth", "store", "runner", "load", "adapters", "observe", "viewer", "workers")

INTRO = """\
# Benchmarks

Every figure on this page was printed by a script in `benchmarks/` and is
rendered from the JSON it wrote (`python benchmarks/render.py`); nothing here is
written by hand. To measure on your machine, run the command shown under a
benchmark, then render the page again.

How to read the figures, once for all of them:

- **Time is CPU time of the measuring thread, median of interleaved runs.**
  Contenders run in turn (a, b, a, b...) in the same minutes, so whatever else
  the machine does weighs on each alike; a ratio measured in one run holds where
  an absolute figure moves with the machine.
- **The reference is a hand-written asyncio loop doing the same work**: the same
  model replies, the same tool calls, the same commits to the same store, with
  none of the guarantees (no log, no replay, no bounds). A ratio of 3x means the
  guarantees cost twice the work the loop does.
- **The collector runs at the interpreter's defaults.** Nothing is frozen or
  disabled to make a figure; where its share matters it is reported.
- **A target states what we aim for; `NOT MET` is printed as it came.** The
  machines these ran on are shared, with two cores; the load at the start of
  each run is recorded beside it.
"""


def describe(name: str) -> str:
    """The first line of the benchmark script's docstring."""
    script = ROOT / "benchmarks" / f"{name}.py"
    if not script.exists():
        return ""
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    return doc.splitlines()[0] if doc else ""


def section(result: dict[str, Any]) -> str:
    """One benchmark's part of the page."""
    name = result["benchmark"]
    env = result.get("environment", {})
    where = (
        f"Measured on {env.get('date', 'an unrecorded date')} with {env.get('implementation', 'Python')} "
        f"{env.get('python', '?')} on {env.get('cores', '?')} cores ({env.get('machine', '?')}), "
        f"load {env.get('load_average_1min', '?')} at the start."
    )
    lines = [f"## {name}", ""]
    if text := describe(name):
        lines += [text, ""]
    lines += [where, ""]
    if command := result.get("command"):
        lines += ["```text", f"$ {command}", "```", ""]
    report = result.get("report", "")
    lines += ["```text", report, "```"] if report else ["The last run kept no report; run the command again."]
    return "\n".join(lines)


def render(results_dir: Path = RESULTS) -> str:
    """The page for the results in ``results_dir``."""
    found = {path.stem: json.loads(path.read_text()) for path in sorted(results_dir.glob("*.json"))}
    names = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    parts = [INTRO]
    parts += [section(found[name]) for name in names if found[name].get("report")]
    missing = [name for name in names if not found[name].get("report")]
    if missing:
        parts.append("Not on this page yet (no run with a report): " + ", ".join(f"`{m}`" for m in missing) + ".")
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if docs/benchmarks.md differs from the results")
    args = parser.parse_args(argv)
    page = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != page:
            print(
                "docs/benchmarks.md differs from benchmarks/results/*.json: run `python benchmarks/render.py`",
                file=sys.stderr,
            )
            return 1
        return 0
    PAGE.write_text(page)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
