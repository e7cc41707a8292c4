"""Run every benchmark in its own process, then write ``RESULTS.md`` from their JSON files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("bench_bm25.py", "bench_encoding.py", "bench_cache.py", "bench_late.py", "bench_reader.py",
           "bench_sentences.py", "bench_ann.py", "bench_long_encoder.py", "japanese_sentences.py")


def cell(value: object) -> str:
    """A scalar as it is; a mapping as ``key: value`` pairs (lists stay in the JSON file)."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def section(path: Path) -> list[str]:
    """One benchmark's section: its scalar results as a two-column table, its ``rows`` as a table."""
    data = json.loads(path.read_text())
    cpu = f", {data['cpu']}" if data.get("cpu") else ""
    lines = [f"## {path.stem}", "", f"machine: {data['machine']}{cpu}, {data['cpus']} CPUs", "",
             "| quantity | value |", "|---|---|"]
    lines += [f"| {key} | {cell(value)} |" for key, value in data.items()
              if key not in ("benchmark", "machine", "cpu", "cpus", "rows") and not isinstance(value, list)]
    rows = data.get("rows") or []
    if rows:
        columns = list(dict.fromkeys(key for row in rows for key in row))
        lines += ["", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join("" if row.get(c) is None else str(row.get(c)) for c in columns) + " |" for row in rows]
    return lines + [""]


def kept_sections(report: Path) -> dict[str, list[str]]:
    """The sections of an existing report, by benchmark name (kept for benchmarks not rerun here)."""
    sections: dict[str, list[str]] = {}
    name = None
    for line in report.read_text().splitlines() if report.exists() else []:
        if line.startswith("## "):
            name = line[3:].strip()
            sections[name] = []
        if name is not None:
            sections[name].append(line)
    return sections


def write_report() -> Path:
    """``RESULTS.md`` from ``results/*.json``; sections of benchmarks with no JSON here are kept."""
    report = HERE / "RESULTS.md"
    sections = kept_sections(report)
    for path in sorted((HERE / "results").glob("*.json")):
        sections[path.stem] = section(path)
    lines = ["# Benchmark results", "", "Written by `benchmarks/run_all.py` from `benchmarks/results/*.json`.",
             "Each comparison is measured inside one run, so both sides see the same machine load.", ""]
    for name in sorted(sections):
        lines += sections[name]
    report.write_text("\n".join(lines).rstrip("\n") + "\n")
    return report


if __name__ == "__main__":
    only = sys.argv[1:] or SCRIPTS
    for script in only:
        subprocess.run([sys.executable, str(HERE / script)], check=True, cwd=HERE)
    print(write_report().read_text())
