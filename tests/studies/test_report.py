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
