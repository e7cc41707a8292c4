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


def with_verdicts(results):
    from grainlab.studies.claims import Claim, verdict_table

    per_query = pd.DataFrame([{"qid": f"q{i}", "system": s, "measure": "nDCG@10", "value": v}
                              for i in range(30) for s, v in (("late", 0.5 + 0.01 * (i % 3)), ("naive", 0.5))])
    verdicts = verdict_table(per_query, [Claim("late beats naive", "66.10 vs 64.20", "late", "naive", "nDCG@10")],
                             n_resamples=500)
    # the paper's claim as the late-chunking claim file names its faithful row
    verdicts = verdicts.assign(part="scifact", system="late · fixed 256 tokens", baseline="naive · fixed 256 tokens")
    folder = results / "late_chunking" / "full"
    report = Report.load(folder)
    report.verdicts = verdicts
    report.save(folder)
    return verdicts


def test_verdicts_lead_the_report_and_fill_the_readme_block(tmp_path):
    from grainlab.publish import README_BEGIN, README_END, readme_block, update_readme

    results, figures = fake_results(tmp_path)
    old = results / "chunk_size" / "full"
    old.mkdir(parents=True)
    (old / "paper_vs_ours.md").write_text("| claim | ours |\n|---|---|\n| x | 1 |\n")
    verdicts = with_verdicts(results)
    html_path, markdown_path = write_report("full", tmp_path / "report.html", results, figures)
    page = html_path.read_text()
    assert page.index("id='verdicts'") < page.index("id='late_chunking'")
    assert "<td class='reproduced'>reproduced</td>" in page and "1 reproduced, 0 not reproduced" in page
    assert "not tested yet" in page  # chunk size predates the verdict tables: said, not hidden
    text = markdown_path.read_text()
    row = verdicts.iloc[0]
    effect = f"{row['effect']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"  # one scale: three decimals
    assert effect in text and "## Verdicts" in text and "| p (Holm) |" in text
    assert "1 reproduced, 0 not reproduced, 0 inconclusive, 0 untestable" in page  # the study's summary line
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{README_BEGIN}\nstale\n{README_END}\n\nafter\n")
    assert update_readme(readme, "full", results)
    assert readme_block("full", results) in readme.read_text() and "stale" not in readme.read_text()
    assert not update_readme(readme, "full", results)  # idempotent


def test_the_report_renders_in_headless_chromium(tmp_path):
    import shutil
    import subprocess

    import numpy as np
    import pytest
    from PIL import Image

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs the Debian package)")
    results, figures = fake_results(tmp_path)
    with_verdicts(results)
    html_path, _ = write_report("full", tmp_path / "report.html", results, figures)
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,800", f"--screenshot={shot}",
                    html_path.as_uri()], check=True, capture_output=True, timeout=120)
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=int)
    assert pixels.shape[:2] == (800, 1000)
    dark = (pixels.sum(axis=2) < 200).mean()  # text was drawn, and the page is not an error screen
    assert 0.001 < dark < 0.3
    green = ((pixels == (0xd9, 0xf0, 0xd3)).all(axis=2)).sum()  # the coloured "reproduced" cell
    assert green > 100


def test_the_overview_names_short_filters_and_drops_float_noise():
    from grainlab.publish import _where

    row = pd.Series({"retriever_label": "MiniLM", "model": "org/reader", "l": 100.0, "threshold": 0.5, "k": None})
    assert _where(row, ["retriever_label", "model", "l", "threshold", "k"]) == "MiniLM, org/reader, l=100, 0.5"


def test_queries_needed_read_as_counts_in_the_html_tables():
    from grainlab.publish import _verdict_html

    table = pd.DataFrame({"verdict": ["inconclusive", "reproduced"], "queries_needed": [4956.0, None],
                          "p_holm": [0.2251, 0.001]})
    page = _verdict_html(table)
    assert "<td class='num'>4,956</td>" in page and "e+03" not in page and "<td class='num'>0.23</td>" in page
    assert "<th>queries needed</th>" in page and "<th>p (Holm)</th>" in page  # human headers


def test_a_decision_study_has_no_row_in_the_verdict_overview_and_a_paper_study_without_verdicts_does():
    from grainlab.publish import StudySection, verdict_overview

    rows = pd.DataFrame({"claim": ["A"], "paper": ["x"], "ours": ["y"]})
    sections = [StudySection("your_documents", "09_your_documents", Report("decision", rows)),
                StudySection("chunk_size", "01_chunk_size", Report("chunk size", rows))]
    overview = verdict_overview(sections)
    assert list(overview["study"]) == ["01_chunk_size"] and overview["verdict"][0].startswith("not tested yet")


def test_no_table_of_the_committed_report_is_wider_than_its_column_at_1280_px(tmp_path):
    """Headless Chromium lays out the report built from the committed results at a 1,280-px
    window; a probe script compares every table's width with its column's."""
    import re
    import shutil
    import subprocess
    from pathlib import Path

    import pytest

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs the Debian package)")
    root = Path(__file__).resolve().parents[1]
    html_path, _ = write_report("full", tmp_path / "report.html", root / "results", root / "figures")
    probe = ("<script>window.addEventListener('load', () => { const wide = [...document.querySelectorAll('table')]"
             ".map(t => [Math.round(t.getBoundingClientRect().width), Math.round(t.parentElement.getBoundingClientRect()"
             ".width)]).filter(([table, column]) => table > column + 1); document.title = 'PROBE' + JSON.stringify("
             "{tables: document.querySelectorAll('table').length, wide: wide}); });</script>")
    html_path.write_text(html_path.read_text().replace("</body>", probe + "</body>"))
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
                          "--virtual-time-budget=5000", "--dump-dom", html_path.as_uri()],
                         check=True, capture_output=True, text=True, timeout=300).stdout
    found = json.loads(re.search(r"PROBE(\{.*?\})</title>", dom).group(1))
    assert found["tables"] >= 10 and found["wide"] == []


def test_every_figure_a_notebook_saves_has_a_caption_and_the_report_shows_it(tmp_path):
    """Issue 39: captions that say what to look at, for every figure name a notebook saves (an
    f-string name by its literal prefix), shown under the figure in both report formats."""
    from grainlab.studies.captions import figure_caption
    from tests.figure_names import saved_figure_names

    names = ["".join(part if part is not None else "Qwen2.5-Coder-0.5B-Instruct" for part in name)
             for name in saved_figure_names()]
    assert len(names) >= 20
    assert [n for n in names if not figure_caption(n)] == []
    results, figures = fake_results(tmp_path)
    html_path, markdown_path = write_report("full", tmp_path / "out" / "report.html", results, figures)
    caption = figure_caption("late_chunking_sweep")
    assert caption.replace("'", "&#x27;") in html_path.read_text() and caption in markdown_path.read_text()


def test_the_report_opens_with_one_line_per_paper_and_folds_the_claim_table(tmp_path):
    results, figures = fake_results(tmp_path)
    verdicts = with_verdicts(results)
    html_path, markdown_path = write_report("full", tmp_path / "r.html", results, figures)
    page = html_path.read_text()
    assert list(verdicts["verdict"]) == ["reproduced"]
    line = "Late chunking (SciFact): reproduced — 1 of 3 claims reproduced: late beats naive reproduced ("
    assert line in page and page.index("Papers at a glance") < page.index("id='verdicts'")
    assert "<details><summary>Every claim (1 rows)</summary>" in page
    assert f"- {line}" in markdown_path.read_text()
