"""Run notebooks' quick profiles with the smoke parameters of ``tests/notebook_smoke.json`` into a
results folder of your choice — to check that a change leaves every number as it was:

    python scripts/smoke_profiles.py /tmp/before          # on the old commit (e.g. a git worktree)
    python scripts/smoke_profiles.py /tmp/after           # on the new one
    python scripts/compare_results.py /tmp/before /tmp/after --tolerance 0

Figures go to ``OUT/figures``; nothing is written under the checkout.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

SMOKE_FILE = Path(__file__).resolve().parents[1] / "tests" / "notebook_smoke.json"


def run_smoke(out: Path, names: list[str] | None = None) -> Path:
    """Execute each named notebook (default: all) with its smoke parameters; results under ``out``."""
    from grainlab.reproduce import reproduce

    smoke = json.loads(SMOKE_FILE.read_text())
    os.environ["GRAINLAB_RESULTS"] = str(out)
    os.environ["GRAINLAB_FIGURES"] = str(out / "figures")
    for name in names or [k for k in smoke if not k.startswith("_")]:
        print(f"== {name}", flush=True)
        reproduce(profile="quick", only=[name], parameters=smoke[name]["parameters"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="+")
    args = parser.parse_args()
    run_smoke(args.out.resolve(), args.only)


if __name__ == "__main__":
    main()
