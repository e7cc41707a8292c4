"""Paper-vs-ours reports: rows in, the same rows out, rendered for the summary."""

import pandas as pd
import pytest

from grainlab.errors import ConfigError
from grainlab.reproduce import write_summary
from grainlab.studies.report import Report


def test_report_round_trip_and_summary(tmp_path, monkeypatch):
    rows = pd.DataFrame([{"claim": "small chunks win", "paper": "64–128", "ours": 0.61234, "p": None}])
    report = Report("Chunk size", rows, "a deviation")
    folder = tmp_path / "chunk_size" / "full"
    folder.mkdir(parents=True)
    report.save(folder)
    loaded = Report.load(folder)
    assert loaded.title == "Chunk size" and loaded.note == "a deviation"
    assert loaded.rows["ours"].iloc[0] == pytest.approx(0.61234)
    assert "| small chunks win | 64–128 | 0.612 | — |" in report.markdown()
    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path))
    summary = write_summary(tmp_path, "full").read_text()
    assert "### Chunk size" in summary and "a deviation" in summary
    with pytest.raises(ConfigError, match="ours"):
        Report("bad", pd.DataFrame([{"claim": "x", "paper": 1}]))


def test_the_conclusion_states_every_verdict_with_its_numbers():
    from grainlab.studies.claims import Claim, verdict_table
    from grainlab.studies.report import conclusion_markdown

    per_query = pd.DataFrame([{"qid": f"q{i}", "system": s, "measure": "nDCG@10", "value": v}
                              for i in range(40) for s, v in (("late", 0.5 + 0.02 * (i % 3)), ("naive", 0.5),
                                                              ("same", 0.5 + 0.001 * (i % 2)))])
    claims = [Claim("late beats naive", "66.10 vs 64.20", "late", "naive", "nDCG@10", paper_effect=0.019),
              Claim("same beats naive", "—", "same", "naive", "nDCG@10")]
    verdicts = verdict_table(per_query, claims, n_resamples=500)
    text = conclusion_markdown(verdicts)
    counts = verdicts["verdict"].value_counts()
    assert text.startswith("**2 claims tested: ")
    assert all(f"{n} {v}" in text.splitlines()[0] for v, n in counts.items())
    for _, row in verdicts.iterrows():
        line = next(line for line in text.splitlines() if row["claim"] in line)
        assert line.startswith(f"- **{row['verdict']}**") and f"{row['effect']:+.3f} [{row['ci_low']:+.3f}, " in line
        assert f"p (Holm) = {row['p_holm']:.3g}" in line and f"n = {int(row['n'])}" in line
    assert "paper +0.019" in text
    assert conclusion_markdown(verdicts.iloc[0:0]) == "No claim was tested in this run."
