"""``grainlab report``: one self-contained page from saved results, nothing recomputed."""

import json

import pandas as pd

from grainlab.cli import main
from grainlab.publish import write_report
from grainlab.studies.report import Report

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def fake_results(tmp_path):
    results, figures = tmp_path / "results", tmp_path / "figures"
    folder = results / "late_chunking" / "full"
    folder.mkdir(parents=True)
    figures.mkdir()
    rows = pd.DataFrame([{"claim": "late > naive <b>", "paper": 66.1, "ours": 70.25, "p (Holm)": 0.012}])
    Report("Late chunking (SciFact)", rows, "Deviation: nomic & a 1,000-document sample.").save(folder)
    (folder / "runtime.json").write_text(json.dumps({"seconds": 5400.0, "finished": "2026-12-01T10:00:00+0000"}))
    (folder / "scifact").mkdir()
    (folder / "scifact" / "manifest.json").write_text(json.dumps({
        "git_commit": "abc123", "models": {"nomic-ai/nomic-embed-text-v1.5": {"source": "offline-package",
                                                                              "revision": "sha256:f7af"}}}))
    (figures / "late_chunking_sweep.png").write_bytes(PNG)
    (figures / "longrag_reader.png").write_bytes(PNG)  # another study's figure: not in this one's section
    return results, figures


def test_the_report_is_one_offline_page_built_from_the_saved_tables(tmp_path):
    results, figures = fake_results(tmp_path)
    html_path, markdown_path = write_report("full", tmp_path / "out" / "report.html", results, figures)
    page = html_path.read_text()
    assert "03_late_chunking: Late chunking (SciFact)" in page
    assert "70.250" in page and "66.100" in page and "abc123" in page and "5400 s" in page
    assert "late &gt; naive &lt;b&gt;" in page and "nomic &amp; a 1,000-document sample" in page  # escaped
    assert page.count("data:image/png;base64,") == 1  # its own figure, embedded
    assert "http://" not in page and "https://" not in page and "src=\"/" not in page  # nothing external
    assert "02_dense_x" not in page  # studies without results are left out
    text = markdown_path.read_text()
    assert "| late > naive <b> | 66.100 | 70.250 |" in text and "(../figures/late_chunking_sweep.png)" in text


def test_the_cli_writes_the_report(tmp_path, monkeypatch, capsys):
    results, figures = fake_results(tmp_path)
    monkeypatch.setenv("GRAINLAB_RESULTS", str(results))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(figures))
    assert main(["report"]) == 0
    assert (results / "report.html").exists() and (results / "report.md").exists()
    assert "report written to" in capsys.readouterr().out


def test_results_from_before_the_saved_rows_show_their_markdown(tmp_path):
    results, figures = fake_results(tmp_path)
    old = results / "chunk_size" / "full"
    old.mkdir(parents=True)
    (old / "paper_vs_ours.md").write_text("| claim | ours |\n|---|---|\n| small chunks & factoids | 64 |\n")
    page = write_report("full", tmp_path / "report.html", results, figures)[0].read_text()
    assert "<h2 id='chunk_size'>01_chunk_size</h2>" in page and "| small chunks &amp; factoids | 64 |" in page
