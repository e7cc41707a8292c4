"""Compare two results trees number by number: did a change leave the results unchanged?

For every per-query and aggregate table under ``REFERENCE`` (``results/<study>/<profile>/...``,
not the per-system store), the table at the same path under ``CANDIDATE`` is joined on the key
columns both have (dataset, granularity, system, stage, qid, measure) and its values (``value``
or ``mean``) compared. Rows of the reference that the candidate lacks are reported; rows the
candidate adds (a new measure or stage) are counted, not errors. Exit status 1 when a value
differs by more than ``--tolerance`` or a reference row is missing.

    python scripts/compare_results.py results /tmp/after/results --profile full
    python scripts/compare_results.py /tmp/before /tmp/after --profile quick --tolerance 0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

KEYS = ("dataset", "granularity", "system", "stage", "qid", "measure")
VALUES = ("value", "mean")
TABLES = ("aggregate.csv", "per_query.csv", "per_query.csv.gz")


def _value_column(frame: pd.DataFrame) -> str | None:
    return next((c for c in VALUES if c in frame.columns), None)


def compare_table(reference: Path, candidate: Path, tolerance: float) -> tuple[list[str], dict[str, int]]:
    """Problems and counts for one pair of tables."""
    ref = pd.read_csv(reference, dtype={"qid": str})
    new = pd.read_csv(candidate, dtype={"qid": str})
    ref_value, new_value = _value_column(ref), _value_column(new)
    if ref_value is None or new_value is None:
        return [f"{reference}: no value column"], {}
    keys = [k for k in KEYS if k in ref.columns and k in new.columns]
    joined = ref[keys + [ref_value]].merge(new[keys + [new_value]].rename(columns={new_value: "_new"}),
                                           on=keys, how="left", indicator=True)
    missing = joined[joined["_merge"] == "left_only"]
    both = joined[joined["_merge"] == "both"]
    diff = (both[ref_value] - both["_new"]).abs()
    one_nan = both[ref_value].isna() != both["_new"].isna()  # NaN on both sides is equal (an undefined IoU)
    bad = both[(diff > tolerance) | one_nan]
    problems = []
    if len(missing):
        problems.append(f"{reference}: {len(missing)} rows missing in the candidate, e.g. "
                        f"{missing[keys].head(3).to_dict('records')}")
    if len(bad):
        worst = bad.assign(diff=diff).sort_values("diff", ascending=False).head(3)
        problems.append(f"{reference}: {len(bad)} values differ by more than {tolerance}, e.g. "
                        f"{worst[keys + [ref_value, '_new']].to_dict('records')}")
    counts = {"rows": len(ref), "matched": len(both), "extra": len(new) - len(both),
              "max_diff": float(diff.max()) if len(diff) else 0.0}
    return problems, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reference", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--profile", default=None, help="only results/<study>/<profile>/ (default: every profile)")
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args(argv)
    problems, compared = [], 0
    for path in sorted(args.reference.rglob("*")):
        rel = path.relative_to(args.reference)
        if path.name not in TABLES or "per_query" in rel.parts[:-1] or "executed" in rel.parts:
            continue
        if args.profile and args.profile not in rel.parts:
            continue
        other = args.candidate / rel
        if not other.exists():
            problems.append(f"{rel}: not in the candidate")
            continue
        found, counts = compare_table(path, other, args.tolerance)
        problems += found
        compared += 1
        print(f"{rel}: {counts.get('matched', 0)}/{counts.get('rows', 0)} rows matched, "
              f"{counts.get('extra', 0)} extra, max |diff| {counts.get('max_diff', float('nan')):.3g}")
    print(f"{compared} tables compared; {len(problems)} problems")
    for problem in problems:
        print("  " + problem)
    return 1 if problems or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
