"""Mutation testing of the modules that decide a result (``make mutants``), with cosmic-ray.

Each module is mutated in a scratch copy of ``src/`` and ``tests/`` (never in the working tree)
and each mutant is run against the tests that decide that module; a mutant the tests do not kill
is a survivor, listed with its line and operator for review. Prints one score line per module
and the total; writes every survivor to ``benchmarks/results/mutants.txt``.

    python scripts/mutants.py                      # every module below (hours on 2 cores)
    python scripts/mutants.py packing identity   # those whose name contains a word given
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTEST = "python -m pytest -x -q -p no:cacheprovider -m 'not slow and not notebook and not long'"
MODULES: dict[str, list[str]] = {  # module → the tests that decide it
    "src/grainlab/packing.py": ["tests/experiments/test_prune.py", "tests/experiments/test_packing.py"],
    "src/grainlab/experiments/identity.py": ["tests/experiments/test_keys.py"],
    "src/grainlab/experiments/store.py": ["tests/experiments/test_prune.py", "tests/experiments/test_packing.py",
                                          "tests/test_integrity.py"],
    "src/grainlab/experiments/verify.py": ["tests/experiments/test_verify.py"],
    "src/grainlab/chunking/recursive.py": ["tests/chunking/test_boundaries.py", "tests/chunking/test_invariants.py"],
    "src/grainlab/chunking/sentences.py": ["tests/chunking/test_boundaries.py", "tests/chunking/test_sentence_blocks.py",
                                           "tests/chunking/test_japanese.py::test_japanese_full_stops_where_pysbd_misses_them",
                                           "tests/chunking/test_japanese.py::test_japanese_sentences_end_at_a_full_stop_outside_brackets"],
    "src/grainlab/evaluation/spans.py": ["tests/evaluation/test_spans.py"],
    "src/grainlab/chunking/citations.py": ["tests/experiments/test_keys.py", "tests/studies/test_your_documents.py"],
    "src/grainlab/data/normalise.py": ["tests/data/test_evidence_spans.py"],
    "src/grainlab/evaluation/verdicts.py": ["tests/evaluation/test_verdicts.py", "tests/studies/test_claims.py"],
    "src/grainlab/retrieval/fusion.py": ["tests/retrieval/test_fusion.py", "tests/retrieval/test_pipeline.py"],
    "src/grainlab/evaluation/significance.py": ["tests/evaluation/test_significance.py"],
    "src/grainlab/studies/claims.py": ["tests/studies/test_claims.py"],
    "src/grainlab/studies/roles.py": ["tests/studies/test_roles.py"],
    "src/grainlab/formatting.py": ["tests/test_formatting.py"],
    "src/grainlab/chunking/foreign.py": ["tests/chunking/test_foreign.py"],
    "src/grainlab/data/recipes.py": ["tests/data/test_recipes.py"],
    "src/grainlab/experiments/reader_rows.py": ["tests/experiments/test_reader_rows.py"],
    "src/grainlab/studies/derived.py": [
        "tests/studies/test_derived_tables.py::test_only_added_columns_is_the_one_proof_of_supersession",
        "tests/studies/test_derived_tables.py::test_write_rewrites_added_columns_and_refuses_changed_values",
        "tests/studies/test_derived_tables.py::test_tables_says_what_to_do_when_no_study_rebuilds"],
    "src/grainlab/experiments/stored.py": [
        "tests/studies/test_derived_tables.py::test_table_differences_names_each_kind_of_change",
        "tests/test_figures.py::test_stored_per_query_is_the_table_run_experiment_returned",
        "tests/test_figures.py::test_the_aggregate_rebuilt_from_the_stored_tables_is_the_engines_and_differences_are_named",
        "tests/test_figures.py::test_a_damaged_or_missing_stored_table_is_one_line_naming_the_system"],
}
REPORT = ROOT / "benchmarks" / "results" / "mutants.txt"


def _config(module: str, tests: list[str], timeout: float) -> str:
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {timeout}\nexcluded-modules = []\n'
            f'test-command = "{PYTEST} {" ".join(tests)}"\n\n[cosmic-ray.distributor]\nname = "local"\n')


def _survivors(session: Path) -> tuple[int, list[str]]:
    """How many mutants ran, and each survivor as ``line: operator``."""
    with sqlite3.connect(session) as db:
        rows = db.execute("SELECT m.start_pos_row, m.operator_name, r.test_outcome FROM mutation_specs m "
                          "JOIN work_results r ON m.job_id = r.job_id").fetchall()
    survived = [f"line {row}: {operator}" for row, operator, outcome in rows if str(outcome).lower() == "survived"]
    return len(rows), sorted(survived, key=lambda s: int(s.split()[1].rstrip(":")))


def run_module(module: str, tests: list[str], scratch: Path) -> tuple[int, list[str], float]:
    """Mutate one module in ``scratch`` and run its tests against every mutant."""
    started = time.perf_counter()
    config, session = scratch / "cr.toml", scratch / f"{Path(module).stem}.sqlite"
    config.write_text(_config(module, tests, timeout=60.0))  # a mutant that loops forever is killed at 60 s
    env_python = str(Path(sys.executable).parent)
    env = {"PATH": f"{env_python}:/usr/bin:/bin", "PYTHONPATH": str(scratch / "src"), "HOME": str(Path.home())}
    for step in (["init", str(config), str(session)], ["exec", str(config), str(session)]):
        subprocess.run([str(Path(env_python) / "cosmic-ray"), *step], cwd=scratch, env=env, check=True)
    total, survivors = _survivors(session)
    kept = REPORT.parent / "mutants"
    kept.mkdir(parents=True, exist_ok=True)
    shutil.copy2(session, kept / session.name)  # cosmic-ray's session: `cr-report` shows each survivor's diff
    return total, survivors, time.perf_counter() - started


def main(words: list[str]) -> int:
    chosen = {m: t for m, t in MODULES.items() if not words or any(w in m for w in words)}
    lines, killed_all, total_all = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="grainlab-mutants-") as tmp:
        scratch = Path(tmp)
        for part in ("src", "tests", "pyproject.toml"):
            source = ROOT / part
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, scratch / part)
        recorded = [*ROOT.glob("results/**/manifest.json"), *ROOT.glob("results/**/per_query/*.json")]
        for manifest in recorded:  # the committed keys and tables' identities, which tests check
            target = scratch / manifest.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(manifest, target)
        subprocess.run(["git", "init", "-q"], cwd=scratch, check=True)
        subprocess.run(["git", "add", "results"], cwd=scratch, check=True)
        for module, tests in chosen.items():
            total, survivors, seconds = run_module(module, tests, scratch)
            killed = total - len(survivors)
            killed_all, total_all = killed_all + killed, total_all + total
            line = f"{module}: {killed} of {total} mutants killed ({100 * killed / max(total, 1):.0f}%, {seconds:.0f} s)"
            print(line, flush=True)
            lines += [line, *(f"  survived: {s}" for s in survivors)]
    summary = f"total: {killed_all} of {total_all} mutants killed ({100 * killed_all / max(total_all, 1):.0f}%)"
    print(summary)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text("\n".join([*lines, summary]) + "\n")
    print(f"survivors written to {REPORT}")
    print(json.dumps({"killed": killed_all, "total": total_all}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
