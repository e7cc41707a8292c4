"""Run the notebooks through papermill and gather their paper-vs-ours tables."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from grainlab import settings
from grainlab.errors import ConfigError, NotebookFailed
from grainlab.experiments.manifest import cpu_name, git_commit, new_manifest
from grainlab.files import atomic_write_text, rewrite_blocks
from grainlab.packing import packed_path, unpack_archives, unpack_tables
from grainlab.readers.archive import ARCHIVE_ENV, ARCHIVE_NAME
from grainlab.settings import project_root
from grainlab.studies.report import Report

NOTEBOOKS: dict[str, str] = {
    "chunk_size": "01_chunk_size",
    "dense_x": "02_dense_x",
    "late_chunking": "03_late_chunking",
    "longrag": "04_longrag",
    "lost_in_the_middle": "05_lost_in_the_middle",
    "hybrid_rerank": "06_hybrid_rerank",
    "semantic_chunking": "07_semantic_chunking",
    "chroma_chunking": "08_chroma_chunking",
    "your_documents": "09_your_documents",
}
PROFILES = ("quick", "full")
# Executed full-profile notebooks are committed (results/executed/*.full.ipynb) so each reads top to
# bottom on a repository browser; a copy over this size has its longest text outputs shortened.
EXECUTED_LIMIT_BYTES = 3_000_000
TEXT_OUTPUT_LIMIT = 4_000  # characters kept of an over-long text output when trimming
_OVERWRITTEN = re.compile(r".*\r(?=[^\n])")  # text a carriage return writes over (tqdm's redraws)
_BAR = re.compile(r"^(?P<desc>[^\n]*?): *(\d+%\||\d+\S* \[\d+:\d\d)")  # tqdm: "desc:  42%|", "desc: 7it [00:01"
_CURSOR_UP = "\x1b[A"  # nested bars redraw a line below, then move the cursor back up


def _last_bar_states(text: str) -> str:
    """Keep only the last of consecutive redraws of one progress bar (a nested tqdm bar in a
    notebook redraws on a new line each time, ending with a cursor-up code)."""
    lines, out = text.split("\n"), []
    for line in lines:
        bar = _BAR.match(line)
        if bar and out:
            previous = _BAR.match(out[-1])
            if previous and previous["desc"] == bar["desc"]:
                out[-1] = line
                continue
        out.append(line)
    return "\n".join(line.replace(_CURSOR_UP, "") for line in out)


@dataclass(frozen=True)
class NotebookSetup:
    """Where a notebook run writes: ``results/<name>/<profile>/`` and ``figures/`` (``figures/quick/``)."""

    quick: bool
    root: Path
    results: Path
    figures: Path


def notebook_setup(name: str, profile: str, mirror: str = "") -> NotebookSetup:
    """The shared first cell of every notebook: mirror setting, profile, output folders, the
    generation archive (``<results>/generations.jsonl``) every reader appends to, and the
    per-query tables and archives committed packed, restored (``grainlab.packing``)."""
    if profile not in PROFILES:
        raise ConfigError(f"PROFILE must be one of {PROFILES}, got {profile!r}")
    if mirror:
        os.environ[settings.MIRROR_ENV] = mirror
    root = project_root()
    results = settings.results_dir() / name / profile
    results.mkdir(parents=True, exist_ok=True)
    quick = profile == "quick"
    figures = settings.figures_dir() / ("quick" if quick else "")
    figures.mkdir(parents=True, exist_ok=True)
    # every reader in this kernel appends its new generations here: committed with the full results,
    # a run longer than a session resumes on a fresh machine (``readers.archive``)
    os.environ[ARCHIVE_ENV] = str(results / ARCHIVE_NAME)
    unpack_tables(results)  # packed per-query tables resume like the others, run by `reproduce` or by hand
    unpack_archives(results)  # and the generations a session elsewhere made
    return NotebookSetup(quick, root, results, figures)


def notebook_paths(name: str, root: Path) -> tuple[Path, Path]:
    """The ``.py`` (jupytext source) and ``.ipynb`` of a registered notebook."""
    if name not in NOTEBOOKS:
        raise ConfigError(f"unknown notebook {name!r}; known: {', '.join(NOTEBOOKS)}")
    stem = root / "notebooks" / NOTEBOOKS[name]
    if not stem.with_suffix(".py").exists():
        raise ConfigError(f"notebook source {stem.with_suffix('.py')} not found: run grainlab reproduce inside a "
                          f"grainlab checkout (it needs notebooks/)")
    return stem.with_suffix(".py"), stem.with_suffix(".ipynb")


KERNELSPEC = {"name": "grainlab", "display_name": "grainlab (.venv)", "language": "python"}
"""The kernel the notebooks name: the project's environment, installed by ``scripts/setup.sh``."""


def kernel_name() -> str:
    """``$GRAINLAB_KERNEL``, else the project's kernel when this Jupyter has it, else ``python3``
    (an install without ``make setup``: the interpreter running papermill)."""
    from jupyter_client.kernelspec import KernelSpecManager

    chosen = os.environ.get("GRAINLAB_KERNEL")
    if chosen:
        return chosen
    return KERNELSPEC["name"] if KERNELSPEC["name"] in KernelSpecManager().find_kernel_specs() else "python3"


def build_notebook(py_path: Path, ipynb_path: Path) -> None:
    """Write the ``.ipynb`` from its jupytext ``py:percent`` source (outputs empty)."""
    import jupytext

    notebook = jupytext.read(py_path)
    notebook.metadata["kernelspec"] = KERNELSPEC
    jupytext.write(notebook, ipynb_path, fmt="ipynb")


def parse_parameters(items: list[str] | None) -> dict[str, object]:
    """``["SEED=3", "MODELS=[\"a\"]"]`` → ``{"SEED": 3, "MODELS": ["a"]}`` (JSON values, else strings)."""
    out: dict[str, object] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ConfigError(f"parameter {item!r} must look like NAME=VALUE")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


def notebook_parameters(py_path: Path) -> dict[str, object]:
    """The names and literal defaults of a notebook's ``parameters`` cell."""
    import ast

    import jupytext

    cells = [c for c in jupytext.read(py_path).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ConfigError(f"{py_path} must have exactly one cell tagged 'parameters', found {len(cells)}")
    out: dict[str, object] = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def check_parameters(name: str, py_path: Path, parameters: dict[str, object]) -> None:
    """Reject ``-p`` names the notebook does not define, and ``PROFILE`` (chosen with ``--profile``,
    so a run is never recorded under the wrong profile)."""
    if "PROFILE" in parameters:
        raise ConfigError("PROFILE is set with --profile, not -p (a -p PROFILE would run one profile and "
                          "record it as the other)")
    known = notebook_parameters(py_path)
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise ConfigError(f"notebook {name} has no parameter(s) {unknown}; its parameters cell defines "
                          f"{', '.join(known)}")
    for key, value in parameters.items():
        default = known[key]
        if not (type(value) is type(default) or (type(default) is float and type(value) is int)):
            raise ConfigError(f"notebook {name}: parameter {key} is {type(default).__name__} ({default!r:.60}), "
                              f"got {type(value).__name__} {value!r:.60}; give it as JSON, e.g. -p {key}="
                              f"{json.dumps(default)[:60]}")


def check_committed(root: Path, profile: str, allow_dirty: bool = False) -> None:
    """A full-profile result is committed beside the code that made it, so that code must be
    committed first: uncommitted changes to it stop a full run unless ``allow_dirty``."""
    from grainlab.experiments.manifest import code_changes

    if profile != "full" or allow_dirty:
        return
    changes = code_changes(root)
    if changes:
        shown = "; ".join(c.strip() for c in changes[:5]) + (f"; … {len(changes) - 5} more" if len(changes) > 5 else "")
        raise ConfigError(f"the full profile makes committed results, but the code has uncommitted changes ({shown}): "
                          "commit them first, or pass --allow-dirty (the manifests then record a -dirty commit)")


def coalesce_streams(notebook: dict) -> None:
    """Merge each cell's consecutive outputs of one stream into one, keeping only what a terminal
    would show after carriage returns (what nbclient's ``coalesce_streams`` does at run time, for
    copies executed without it) and only the last state of each progress bar."""
    for cell in notebook["cells"]:
        merged: list[tuple[dict, list[str]]] = []  # (output, its text pieces)
        for output in cell.get("outputs", []):
            previous = merged[-1][0] if merged else None
            is_stream = output.get("output_type") == "stream"
            if (is_stream and previous is not None and previous.get("output_type") == "stream"
                    and previous.get("name") == output.get("name")):
                merged[-1][1].append("".join(output["text"]))
            else:
                merged.append((output, ["".join(output["text"])] if is_stream else []))
        for output, pieces in merged:
            if output.get("output_type") == "stream":
                output["text"] = _last_bar_states(_OVERWRITTEN.sub("", "".join(pieces)))
        if "outputs" in cell:
            cell["outputs"] = [output for output, _ in merged]


_NOISE = re.compile(r"^(?:.*TqdmWarning: IProgress not found.*|  from \.autonotebook import tqdm as notebook_tqdm"
                    r"|Loading weights: .*)\n?", re.MULTILINE)  # a missing widget library; transformers' load bar
_KERNEL_CELL = re.compile(r"/tmp/ipykernel_\d+/\d+\.py")


def without_machine(text: str, root: Path) -> str:
    """``text`` as any machine would have printed it: paths inside the project relative to it, a
    kernel's cell file as ``<cell>``, and no line of the noise that says nothing about the run
    (tqdm's missing-widgets warning, transformers' per-load "Loading weights" bar)."""
    text = _NOISE.sub("", text)
    text = _KERNEL_CELL.sub("<cell>", text)
    return text.replace(f"{root.resolve()}/", "").replace(str(root.resolve()), ".")


def _scrubbed(value: str | list[str], root: Path) -> str | list[str]:
    """:func:`without_machine` on a notebook text, kept in its form (a string, or a list of lines)."""
    text = without_machine("".join(value), root)
    return text if isinstance(value, str) else text.splitlines(keepends=True)


def scrub_outputs(notebook: dict, root: Path) -> None:
    """:func:`without_machine` on every text output of ``notebook`` and on papermill's record of
    where it ran; an output left empty is dropped."""
    for cell in notebook["cells"]:
        kept = []
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = _scrubbed(output["text"], root)
                if not output["text"]:
                    continue
            for kind in ("text/plain", "text/html"):
                if kind in output.get("data", {}):
                    output["data"][kind] = _scrubbed(output["data"][kind], root)
            kept.append(output)
        if "outputs" in cell:
            cell["outputs"] = kept
    run = notebook.get("metadata", {}).get("papermill", {})
    for key in ("input_path", "output_path", "cwd"):
        if isinstance(run.get(key), str):
            run[key] = without_machine(run[key], root)


def trim_outputs(path: Path, limit: int = EXECUTED_LIMIT_BYTES, keep: int = TEXT_OUTPUT_LIMIT,
                 root: Path | None = None) -> int:
    """Coalesce an executed notebook's streams (``coalesce_streams``), take the machine out of its
    text (``scrub_outputs``, paths relative to ``root``, default the project's), then, while it is
    over ``limit`` bytes, shorten its longest text outputs (streams, text/plain, text/html); images
    stay. Returns the number of outputs shortened."""
    notebook = json.loads(path.read_text("utf-8"))
    coalesce_streams(notebook)
    scrub_outputs(notebook, root or project_root())
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if "text" in output:
                texts.append((output, "text"))
            for kind in ("text/plain", "text/html"):
                if kind in output.get("data", {}):
                    texts.append((output["data"], kind))
    texts.sort(key=lambda item: -len("".join(item[0][item[1]])))
    shortened = 0
    for holder, key in texts:
        text = "".join(holder[key])
        if len(text) <= keep or len(json.dumps(notebook)) <= limit:
            break
        holder[key] = text[:keep] + f"\n… [{len(text) - keep:,} characters trimmed: the full output is in results/]\n"
        shortened += 1
    atomic_write_text(path, json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n")  # as nbformat
    return shortened


@contextlib.contextmanager
def quiet_papermill() -> Iterator[None]:
    """Silence what papermill and the kernel say that is no news to a user: its parameter-cell
    parser's "Unable to parse line …" (our parameter cells hold dicts over several lines; the
    parameters are checked by ``check_parameters``), and its warnings. A failing cell still raises."""
    loggers = [logging.getLogger(name) for name in ("papermill", "papermill.translators", "traitlets")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="papermill")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]
"""The kernel's own log (its "running over TCP without encryption" warning on a loopback-only
kernel): errors only. A notebook's errors reach papermill as cell outputs, not through this log."""


def verdict_summary(folder: Path) -> str:
    """``"3 reproduced · 1 not reproduced · 5 inconclusive"`` from a study's ``verdicts.csv``
    (``""`` when it has none)."""
    import pandas as pd

    from grainlab.studies.claims import verdict_counts

    path = folder / "verdicts.csv"
    if not path.exists():
        return ""
    counts = verdict_counts(pd.read_csv(path))
    return " · ".join(f"{count} {verdict}" for verdict, count in sorted(counts.items())) or "no claims"


def reproduce(profile: str = "quick", only: list[str] | None = None, mirror: str | None = None,
              root: Path | None = None, parameters: dict[str, object] | None = None,
              allow_dirty: bool = False, progress: bool = True) -> Path:
    """Execute notebooks with ``PROFILE`` (and any ``parameters``) injected; write executed copies
    and the profile's summary. The full profile refuses uncommitted code (``check_committed``)
    unless ``allow_dirty``.

    Every parameter is checked against every chosen notebook before anything runs. An executed
    notebook, its ``runtime.json`` and the summary are replaced only when the notebook finished:
    an interrupted or failed run leaves the last complete ones in place (a failed run's copy is
    kept beside them as ``<notebook>.<profile>.failed.ipynb``).

    It says one line as each notebook starts and one as it ends (seconds, cold or warm cache, its
    verdict counts), under a progress bar over the notebooks (``progress=False``: the lines only)."""
    import papermill
    from tqdm.auto import tqdm

    if profile not in PROFILES:
        raise ConfigError(f"profile must be one of {PROFILES}, got {profile!r}")
    root = root or project_root()
    names = only or list(NOTEBOOKS)
    parameters = parameters or {}
    for name in names:
        check_parameters(name, notebook_paths(name, root)[0], parameters)
    check_committed(root, profile, allow_dirty)
    if mirror:
        os.environ[settings.MIRROR_ENV] = str(Path(mirror).resolve())
    results = settings.results_dir()
    executed = results / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    cold_cache = not any(settings.cache_dir().iterdir())  # the job starts with nothing computed
    bar = tqdm(names, desc=f"notebooks ({profile})", unit="notebook", file=sys.stderr, disable=not progress)
    for number, name in enumerate(bar, start=1):
        py_path, ipynb_path = notebook_paths(name, root)
        if not ipynb_path.exists():
            build_notebook(py_path, ipynb_path)
        target = executed / f"{NOTEBOOKS[name]}.{profile}.ipynb"
        partial = executed / f".{target.stem}.partial.ipynb"  # papermill warns about any other suffix
        archive = results / name / profile / ARCHIVE_NAME
        archived = any(path.exists() and path.stat().st_size > 0  # generations already made: not cold
                       for path in (archive, packed_path(archive)))
        tick = time.perf_counter()
        tqdm.write(f"[{number}/{len(names)}] {NOTEBOOKS[name]} ({profile}) started "
                   f"{time.strftime('%H:%M:%S')}", file=sys.stdout)
        try:
            with quiet_papermill():
                papermill.execute_notebook(
                    str(ipynb_path), str(partial), parameters={"PROFILE": profile, **parameters},
                    cwd=str(root / "notebooks"), kernel_name=kernel_name(),
                    progress_bar=False, coalesce_streams=True,  # one output per stream, progress bars' last state
                    extra_arguments=KERNEL_ARGUMENTS)
        except papermill.PapermillExecutionError as exc:
            failed = target.with_suffix(".failed.ipynb")
            if partial.exists():
                os.replace(partial, failed)
            raise NotebookFailed(f"notebook {NOTEBOOKS[name]} ({profile}) failed in cell {exc.exec_count}: "
                                 f"{exc.ename}: {exc.evalue}\n  executed copy with the traceback: {failed}\n"
                                 f"  the last complete run ({target.name}, runtime.json) is unchanged") from None
        except BaseException:  # interrupted: the last complete copy stays
            partial.unlink(missing_ok=True)
            raise
        trim_outputs(partial, root=root)
        os.replace(partial, target)
        seconds = time.perf_counter() - tick
        run_info = {"notebook": NOTEBOOKS[name], "profile": profile, "seconds": round(seconds, 1),
                    "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "parameters": parameters,
                    "cache": "cold" if cold_cache and not archived else "warm", "cpu": cpu_name()}
        runtime = results / name / profile / "runtime.json"
        atomic_write_text(runtime, json.dumps(runtime_record(run_info, runtime)))
        write_study_manifest(root, name, profile, parameters)
        verdicts = verdict_summary(results / name / profile)
        refresh_run_times(root, results)
        tqdm.write(f"[{number}/{len(names)}] {NOTEBOOKS[name]} ({profile}) finished in {seconds:,.0f} s, "
                   f"{run_info['cache']} cache{': ' + verdicts if verdicts else ''}", file=sys.stdout)
    return write_summary(root, profile)


def write_study_manifest(root: Path, name: str, profile: str, parameters: dict[str, object]) -> Path:
    """``results/<study>/<profile>/manifest.json``: the commit, the notebook's parameters (defaults
    with the injected ones), package versions, and the models its experiments recorded (gathered
    from their own manifests, which it lists)."""
    folder = settings.results_dir() / name / profile
    nested = sorted(p for p in folder.glob("**/manifest.json") if p.parent != folder)
    models: dict[str, object] = {}
    for path in nested:  # an experiment's systems record the model each ran with
        for system in json.loads(path.read_text("utf-8")).get("systems", {}).values():
            record = system.get("model") if isinstance(system, dict) else None
            if isinstance(record, dict) and record.get("id"):
                models[record["id"]] = {k: v for k, v in record.items() if k != "id"}
    manifest = new_manifest(notebook=NOTEBOOKS[name], profile=profile,
                            **{**notebook_parameters(notebook_paths(name, root)[0]), **parameters})
    manifest.update(git_commit=git_commit(root), models=models,
                    experiments=[p.relative_to(folder).as_posix() for p in nested])
    manifest.pop("systems", None)
    path = folder / "manifest.json"
    atomic_write_text(path, json.dumps(manifest, indent=1, default=str))
    return path


def runtime_record(run_info: dict, previous: Path) -> dict:
    """The ``runtime.json`` record of this run: ``run_info`` with the cold time and the history
    carried over from the record at ``previous`` (read once; absent for a first run)."""
    old = json.loads(previous.read_text("utf-8")) if previous.exists() else {}
    return with_history(with_cold_time(run_info, old), old)


def with_cold_time(run_info: dict, old: dict) -> dict:
    """``run_info`` with the latest cold run's time (``cold_seconds``, ``cold_finished``): this
    run's when it started from an empty cache, else carried over from the ``old`` record."""
    if run_info["cache"] == "cold":
        return {**run_info, "cold_seconds": run_info["seconds"], "cold_finished": run_info["finished"]}
    if old.get("cold_seconds") is None and old.get("cache") == "cold":
        old = {**old, "cold_seconds": old["seconds"], "cold_finished": old["finished"]}
    return {**run_info, **{k: old[k] for k in ("cold_seconds", "cold_finished") if k in old}}


HISTORY_LENGTH = 20


def with_history(run_info: dict, old: dict) -> dict:
    """``run_info`` with ``history``: the ``old`` record's runs' ``seconds``/``cache``/``finished``
    (newest last, at most :data:`HISTORY_LENGTH`) and this one, so a cached rerun does not erase
    the time of the run that computed the results."""
    history = list(old.get("history") or ([_run_entry(old)] if old.get("seconds") is not None else []))
    history.append(_run_entry(run_info))
    return {**run_info, "history": history[-HISTORY_LENGTH:]}


def _run_entry(info: dict) -> dict:
    entry = {"seconds": info["seconds"], "cache": info.get("cache", "unrecorded"), "finished": info.get("finished")}
    return {**entry, "cpu": info["cpu"]} if info.get("cpu") else entry


RUN_TIMES_BEGIN, RUN_TIMES_END = ("<!-- run-times:begin (generated from the run records by `grainlab report --readme "
                                  "docs/profiles.md`) -->", "<!-- run-times:end -->")
MAIN_JOB = "main_job"
"""The folder under ``results/`` of the main job's run record (``make reproduce``)."""


def run_times_table(results: Path) -> str:
    """Every run record under ``results`` as one Markdown table: the main job (``make reproduce``)
    and each notebook's full and quick profile — the last run with its cache state, CPU and date,
    the longest run recorded and the latest cold one. Nothing here is typed by hand."""
    rows = ["| run | last run (s) | cache at start | CPU | finished | longest recorded (s) | cold run (s) |",
            "|---|---|---|---|---|---|---|"]
    records = [("`make reproduce` (main job)", results / MAIN_JOB / "runtime.json")]
    records += [(f"{stem} ({profile})", results / name / profile / "runtime.json")
                for name, stem in NOTEBOOKS.items() for profile in ("full", "quick")]
    for label, path in records:
        if not path.exists():
            continue
        info = json.loads(path.read_text("utf-8"))
        last, cache, longest, cold = run_time_cells(info)
        rows.append(f"| {label} | {last} | {cache} | {info.get('cpu', 'unrecorded')} | {info.get('finished', '')} | "
                    f"{longest} | {cold} |")
    return "\n".join(rows)


def refresh_run_times(root: Path, results: Path | None = None) -> bool:
    """Rewrite the run-time table of ``docs/profiles.md`` from the records (after a run wrote
    one, so a run never leaves that page stale); only for the checkout's own ``results/`` (a run
    into another folder leaves the page alone); True when it changed."""
    page = root / "docs" / "profiles.md"
    results = results or settings.results_dir()
    if not page.exists() or results.resolve() != (root / "results").resolve():
        return False
    return rewrite_blocks(page, {(RUN_TIMES_BEGIN, RUN_TIMES_END): lambda: run_times_block(results)})[1]


def run_times_block(results: Path | None = None) -> str:
    """:func:`run_times_table` between its markers (``docs/profiles.md``)."""
    return f"{RUN_TIMES_BEGIN}\n{run_times_table(results or settings.results_dir())}\n{RUN_TIMES_END}"


def run_time_cells(info: dict) -> tuple[str, str, str, str]:
    """``last run (s)``, ``cache at start``, ``longest recorded run (s)`` and ``cold run (s)`` cells of
    a runtime record (runs recorded before the cache state was: ``unrecorded``)."""
    cold = info.get("cold_seconds")
    longest = max((entry["seconds"] for entry in info.get("history") or []), default=info["seconds"])
    return (f"{info['seconds']:.0f}", info.get("cache", "unrecorded"), f"{longest:.0f}",
            "—" if cold is None else f"{cold:.0f}")


def write_summary(root: Path, profile: str) -> Path:
    """Every notebook's paper-vs-ours table for ``profile``, with run times: ``results/summary.md``
    for the full profile (committed), ``results/summary-<profile>.md`` otherwise."""
    lines = ["# grainlab results summary", "", f"Profile: **{profile}** (`grainlab reproduce --profile {profile}`).",
             "", "Run times: the last run (with what the cache held when the job started), the longest run "
             "recorded (the one that computed most of the results), and the latest run from an empty cache (cold).", "",
             "| notebook | last run (s) | cache at start | finished | longest recorded (s) | cold run (s) |",
             "|---|---|---|---|---|---|"]
    sections = []
    for name, stem in NOTEBOOKS.items():
        folder = settings.results_dir() / name / profile
        if (folder / "runtime.json").exists():
            info = json.loads((folder / "runtime.json").read_text())
            last, cache, longest, cold = run_time_cells(info)
            lines.append(f"| {stem} | {last} | {cache} | {info['finished']} | {longest} | {cold} |")
        if (folder / "paper_vs_ours.json").exists():  # a study's report rows (grainlab.studies)
            sections += ["", f"## {name} ({stem})", "", Report.load(folder).markdown().strip()]
        elif (folder / "paper_vs_ours.md").exists():  # results written before the studies had reports
            sections += ["", f"## {name} ({stem})", "", (folder / "paper_vs_ours.md").read_text().strip()]
    lines += sections
    path = settings.results_dir() / ("summary.md" if profile == "full" else f"summary-{profile}.md")
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
