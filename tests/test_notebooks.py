"""Notebooks: the committed .ipynb equals its jupytext source, and each runs (quick profile)."""

import json
import os
import re

import jupytext
import pytest

from grainlab import settings
from grainlab.reproduce import NOTEBOOKS, notebook_paths, reproduce
from grainlab.settings import project_root
from tests.notebook_numbers import REFERENCE_FILE, SMOKE, compare, headline_numbers

ROOT = project_root()


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_ipynb_matches_py_source_and_has_no_outputs(name):
    py_path, ipynb_path = notebook_paths(name, ROOT)
    source = jupytext.read(py_path)
    committed = jupytext.read(ipynb_path)
    assert [c.source for c in committed.cells] == [c.source for c in source.cells]
    raw = json.loads(ipynb_path.read_text())
    assert all(not c.get("outputs") for c in raw["cells"] if c["cell_type"] == "code")
    tagged = [c for c in source.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "PROFILE = \"quick\"" in tagged[0].source


@pytest.mark.notebook
@pytest.mark.mirror
@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_quick_profile_runs_under_papermill(name, mirror, monkeypatch):
    """Each notebook runs top to bottom under papermill (its quick profile shrunk further by the smoke
    parameters in ``notebook_smoke.json``, so a cold CI machine finishes), and its headline numbers
    equal the committed reference within the stated tolerance."""
    monkeypatch.setenv("GRAINLAB_MIRROR", str(mirror))
    summary = reproduce(profile="quick", only=[name], root=ROOT, parameters=SMOKE[name]["parameters"])
    text = summary.read_text()
    assert NOTEBOOKS[name] in text and "| notebook | last run (s) | cache at start | finished | longest recorded (s) | cold run (s) |" in text
    results = settings.results_dir()
    assert ROOT / "results" not in (results, *results.parents)  # isolated from the committed results
    executed = results / "executed" / f"{NOTEBOOKS[name]}.quick.ipynb"
    cells = json.loads(executed.read_text())["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert (results / name / "quick" / "paper_vs_ours.md").exists()
    reference = json.loads(REFERENCE_FILE.read_text())[name]
    found = headline_numbers(results, name)
    assert len(found) >= 3, f"too few headline numbers found for {name}: {found}"
    problems = compare(found, reference["numbers"], SMOKE[name].get("tolerance", 0.02))
    assert not problems, "\n".join(problems[:20])
    assert os.environ["GRAINLAB_MIRROR"] == str(mirror)


def test_an_interrupted_run_keeps_the_last_complete_outputs(monkeypatch, tmp_path):
    import papermill

    results = settings.results_dir()
    executed = results / "executed" / f"{NOTEBOOKS['chunk_size']}.quick.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    executed.write_text("last complete run")
    runtime = results / "chunk_size" / "quick" / "runtime.json"
    runtime.parent.mkdir(parents=True, exist_ok=True)
    runtime.write_text('{"seconds": 1}')

    def interrupted(source, target, **kwargs):
        open(target, "w").write("half a notebook")
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reproduce(profile="quick", only=["chunk_size"], root=ROOT)
    assert executed.read_text() == "last complete run" and runtime.read_text() == '{"seconds": 1}'
    assert sorted(p.name for p in executed.parent.iterdir()) == [executed.name]


def test_the_main_job_says_one_line_per_notebook_start_and_end_and_nothing_else(monkeypatch, capsys):
    """Issue 35: 19 silent minutes but for papermill's parser and suffix warnings and the kernel's TCP
    warning. Now: a start and an end line per notebook (seconds, cache, verdicts), no noise."""
    import logging

    import nbformat
    import papermill

    seen = {}

    def fake_execute(source, target, **kwargs):
        seen.update(kwargs)
        logging.getLogger("papermill.translators").warning("Unable to parse line 9 'PROPOSITIONIZER = …'.")
        assert str(target).endswith(".ipynb")  # papermill warns "does not end in one of ['.ipynb', ...]" otherwise
        nbformat.write(nbformat.v4.new_notebook(), target)

    folder = settings.results_dir() / "chunk_size" / "quick"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "verdicts.csv").write_text("claim,verdict\na,reproduced\nb,inconclusive\nc,reproduced\n")
    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    reproduce(profile="quick", only=["chunk_size"], root=ROOT, progress=False)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("[1/1] 01_chunk_size (quick) started ")
    assert re.fullmatch(r"\[1/1\] 01_chunk_size \(quick\) finished in \d+ s, (cold|warm) cache: "
                        r"1 inconclusive · 2 reproduced", lines[1]), lines[1]
    assert "Unable to parse" not in out + err, err
    assert seen["extra_arguments"] == ["--IPKernelApp.log_level=ERROR"]


@pytest.mark.notebook
@pytest.mark.mirror
def test_a_failing_notebook_is_reported_in_a_few_lines(mirror, monkeypatch):
    from grainlab.errors import NotebookFailed

    monkeypatch.setenv("GRAINLAB_MIRROR", str(mirror))
    with pytest.raises(NotebookFailed) as failure:
        reproduce(profile="quick", only=["chunk_size"], root=ROOT, parameters={"IR_DATASET": "no-such-dataset"})
    message = str(failure.value)
    assert "failed in cell" in message and "unknown dataset 'no-such-dataset'" in message
    assert message.count("\n") <= 3
    executed = settings.results_dir() / "executed"
    assert (executed / f"{NOTEBOOKS['chunk_size']}.quick.failed.ipynb").exists()
    assert not (executed / f"{NOTEBOOKS['chunk_size']}.quick.ipynb").exists()
    assert not (settings.results_dir() / "chunk_size" / "quick" / "runtime.json").exists()


def test_every_study_run_writes_a_manifest_with_commit_parameters_and_models():
    from grainlab.reproduce import write_study_manifest

    folder = settings.results_dir() / "chunk_size" / "quick"
    (folder / "scifact").mkdir(parents=True, exist_ok=True)
    (folder / "scifact" / "manifest.json").write_text(json.dumps({"systems": {
        "bge · 64": {"model": {"id": "BAAI/bge-small-en-v1.5", "source": "offline-package"}}, "BM25 · 64": {}}}))
    manifest = json.loads(write_study_manifest(ROOT, "chunk_size", "quick", {"QUICK_QA_DOCS": 1}).read_text())
    assert manifest["parameters"]["QUICK_QA_DOCS"] == 1 and manifest["parameters"]["CHUNK_SIZES"] == [64, 128, 256, 512, 1024]
    assert manifest["models"] == {"BAAI/bge-small-en-v1.5": {"source": "offline-package"}}
    assert manifest["experiments"] == ["scifact/manifest.json"] and manifest["git_commit"]
    assert manifest["versions"]["pandas"]


def test_notebooks_name_the_project_kernel_that_setup_installs():
    from grainlab.reproduce import KERNELSPEC, kernel_name

    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert f"--name {KERNELSPEC['name']} " in setup
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert json.loads(path.read_text())["metadata"]["kernelspec"] == KERNELSPEC, path.name
    assert kernel_name() in (KERNELSPEC["name"], "python3")


def test_each_parameters_cell_says_how_to_run_it_on_another_model():
    """The first line of every parameters cell says how to change the model; a concrete
    ``-p 'NAME=VALUE'`` there names a parameter of that notebook, of its type."""
    import re

    import jupytext

    from grainlab.reproduce import check_parameters, notebook_paths, parse_parameters

    for name in NOTEBOOKS:
        py_path, _ = notebook_paths(name, ROOT)
        cell = next(c for c in jupytext.read(py_path).cells if "parameters" in c.metadata.get("tags", []))
        first = cell.source.splitlines()[0]
        assert first.startswith("# another model:") and f"--only {name} " in first, (name, first)
        examples = re.findall(r"-p '([^']+)'", first)
        check_parameters(name, py_path, parse_parameters(examples))
