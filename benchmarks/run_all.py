"""Run every benchmark in its own process, then write ``RESULTS.md`` from their JSON files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("bench_bm25.py", "bench_encoding.py", "bench_cache.py", "bench_late.py", "bench_reader.py",
           "bench_sentences.py")


def write_report() -> Path:
    lines = ["# Benchmark results", "", "Written by `benchmarks/run_all.py` from `benchmarks/results/*.json`.",
             "Each comparison is measured inside one run, so both sides see the same machine load.", ""]
    for path in sorted((HERE / "results").glob("*.json")):
        data = json.loads(path.read_text())
        lines += [f"## {path.stem}", "", f"machine: {data['machine']}, {data['cpus']} CPUs", "",
                  "| quantity | value |", "|---|---|"]
        lines += [f"| {key} | {value} |" for key, value in data.items() if key not in ("benchmark", "machine", "cpus")]
        lines.append("")
    report = HERE / "RESULTS.md"
    report.write_text("\n".join(lines))
    return report


if __name__ == "__main__":
    only = sys.argv[1:] or SCRIPTS
    for script in only:
        subprocess.run([sys.executable, str(HERE / script)], check=True, cwd=HERE)
    print(write_report().read_text())
