import json
import math
import os
import subprocess
import sys

import pytest

from grainlab.cli import main
from tests.conftest import TOY_CORPUS


def test_chunk_reads_beir_from_stdin(monkeypatch, capsys):
    import io

    lines = "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in TOY_CORPUS.items())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines.encode())))
    assert main(["chunk", "fixed_tokens(size=4,overlap=1)"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"id", "doc_id", "start", "end", "text", "n_tokens"} <= set(records[0])
    for record in records:
        title, text = TOY_CORPUS[record["doc_id"]]
        assert f"{title} {text}"[record["start"]:record["end"]] == record["text"]
        assert record["n_tokens"] <= 4


def test_chunk_with_hf_tokenizer(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps({"_id": "x", "text": "one two three " * 20}).encode())))
    assert main(["chunk", "fixed_tokens(size=8,overlap=0)", "--tokenizer",
                 "sentence-transformers/all-MiniLM-L6-v2", "--field", "text"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 8 and records[0]["text"] == "one two three one two three one two"


def test_evaluate_prints_measure_lines(toy_mirror, tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 9 x\nq2 Q0 d4 1 5 x\nq2 Q0 d3 2 4 x\n")
    assert main(["evaluate", "--mirror", str(toy_mirror), "--dataset", "scifact", str(run),
                 "--measures", "nDCG@10", "P@1"]) == 0
    out = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert float(out["P@1"]) == pytest.approx(1 / 3, abs=1e-4)
    # q1: d1 at rank 1 → 1; q2: d3 at rank 2 → 1/log2(3); q3 unanswered → 0
    assert float(out["nDCG@10"]) == pytest.approx((1 + 1 / math.log2(3)) / 3, abs=1e-4)


def test_errors_are_one_clear_line(tmp_path, capsys):
    assert main(["evaluate", "--dataset", "no-such-set", "--mirror", str(tmp_path), "run.txt"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: unknown dataset 'no-such-set'") and err.count("\n") == 1


def test_bad_chunk_spec(capsys):
    assert main(["chunk", "fixed_tokens(size=0)"]) == 2
    assert "size must be" in capsys.readouterr().err


def test_datasets_command(toy_mirror):
    out = subprocess.run([sys.executable, "-m", "grainlab.cli", "datasets", "--mirror", str(toy_mirror)],
                         capture_output=True, text=True, check=True).stdout
    assert "scifact" in out and "available" in out and "nfcorpus" in out and "missing" in out


def test_reproduce_parameters_parse():
    from grainlab.errors import ConfigError
    from grainlab.reproduce import parse_parameters

    assert parse_parameters(["SEED=3", 'MODELS=["a/b"]', "NAME=plain text"]) == \
        {"SEED": 3, "MODELS": ["a/b"], "NAME": "plain text"}
    with pytest.raises(ConfigError):
        parse_parameters(["no-equals"])


def test_reproduce_ray_flag_reaches_the_notebooks(monkeypatch):
    """``--ray`` sets ``$GRAINLAB_RAY`` for the notebook kernels (no flag: unchanged)."""
    import grainlab.reproduce as reproduce_module

    seen = []
    monkeypatch.setattr(reproduce_module, "reproduce", lambda **kwargs: seen.append(os.environ.get("GRAINLAB_RAY")) or "x")
    monkeypatch.delenv("GRAINLAB_RAY", raising=False)
    assert main(["reproduce", "--only", "chunk_size"]) == 0
    assert main(["reproduce", "--ray"]) == 0
    assert main(["reproduce", "--ray", "ray://head:10001"]) == 0
    assert seen == [None, "auto", "ray://head:10001"]


def test_the_full_profile_refuses_uncommitted_code(tmp_path):
    """Committed results come from committed code: a change under src/ or notebooks/ stops a full
    run (not a quick one, and not with --allow-dirty); changed results or figures do not."""
    from grainlab.errors import ConfigError
    from grainlab.reproduce import check_committed

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    for path in ("src/grainlab/x.py", "results/r.csv", "notebooks/n.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("1\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (tmp_path / "results" / "r.csv").write_text("2\n")
    check_committed(tmp_path, "full")  # outputs may change
    (tmp_path / "src" / "grainlab" / "x.py").write_text("2\n")
    (tmp_path / "notebooks" / "new.py").write_text("new\n")
    with pytest.raises(ConfigError, match=r"uncommitted changes \(M src/grainlab/x.py; \?\? notebooks/new.py\)"):
        check_committed(tmp_path, "full")
    check_committed(tmp_path, "quick")
    check_committed(tmp_path, "full", allow_dirty=True)


def test_reproduce_passes_allow_dirty(monkeypatch):
    import grainlab.reproduce as reproduce_module

    seen = []
    monkeypatch.setattr(reproduce_module, "reproduce", lambda **kwargs: seen.append(kwargs["allow_dirty"]) or "x")
    assert main(["reproduce", "--profile", "full", "--allow-dirty"]) == 0
    assert main(["reproduce"]) == 0
    assert seen == [True, False]
