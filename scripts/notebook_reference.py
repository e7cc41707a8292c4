"""Write ``tests/notebook_reference.json``: each notebook's headline numbers under its smoke parameters.

    python scripts/notebook_reference.py [--results DIR] [--only NAME ...]

Without ``--results`` the notebooks are run first (quick profile + smoke parameters, into a
temporary results folder); with it, the tables already there are read. Review the diff of the JSON
before committing it: a changed number is either an intended change or a regression.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.notebook_numbers import REFERENCE_FILE, SMOKE, headline_numbers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path)
    parser.add_argument("--only", nargs="+", default=[k for k in SMOKE if not k.startswith("_")])
    args = parser.parse_args()
    results = args.results
    if results is None:
        from scripts.smoke_profiles import run_smoke

        results = run_smoke(Path(tempfile.mkdtemp(prefix="grainlab-reference-")), args.only)
    reference = json.loads(REFERENCE_FILE.read_text()) if REFERENCE_FILE.exists() else {}
    for name in args.only:
        numbers = headline_numbers(results, name)
        reference[name] = {"parameters": SMOKE[name]["parameters"], "numbers": numbers}
        print(f"{name}: {len(numbers)} numbers")
    REFERENCE_FILE.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
