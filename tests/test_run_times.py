"""Run-time records: a cached rerun keeps the times of the runs before it (cold and longest)."""

import json

from grainlab.reproduce import HISTORY_LENGTH, run_time_cells, runtime_record


def record(path, seconds, cache, finished):
    info = {"seconds": seconds, "cache": cache, "finished": finished}
    info = runtime_record(info, path)
    path.write_text(json.dumps(info))
    return info


def test_a_cached_rerun_keeps_the_cold_and_the_longest_run(tmp_path):
    path = tmp_path / "runtime.json"
    record(path, 3000.0, "cold", "t1")
    record(path, 2600.0, "warm", "t2")  # e.g. an archive resumed: still most of the work
    info = record(path, 40.0, "warm", "t3")
    assert info["seconds"] == 40.0 and info["cold_seconds"] == 3000.0 and info["cold_finished"] == "t1"
    assert [e["finished"] for e in info["history"]] == ["t1", "t2", "t3"]
    assert run_time_cells(info) == ("40", "warm", "3000", "3000")


def test_a_record_from_before_the_history_is_its_first_entry_and_the_history_is_capped(tmp_path):
    path = tmp_path / "runtime.json"
    path.write_text(json.dumps({"seconds": 6016.4, "finished": "old"}))  # no cache state, no history
    info = record(path, 12.0, "warm", "new")
    assert info["history"][0] == {"seconds": 6016.4, "cache": "unrecorded", "finished": "old"}
    assert run_time_cells(info) == ("12", "warm", "6016", "—")
    for i in range(HISTORY_LENGTH + 5):
        info = record(path, float(i), "warm", f"r{i}")
    assert len(info["history"]) == HISTORY_LENGTH and info["history"][-1]["finished"] == f"r{HISTORY_LENGTH + 4}"
