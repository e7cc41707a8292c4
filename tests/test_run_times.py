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


def test_the_run_time_table_is_every_record_with_its_cpu(tmp_path):
    from grainlab.reproduce import MAIN_JOB, run_times_table

    (tmp_path / "chunk_size" / "full").mkdir(parents=True)
    (tmp_path / "chunk_size" / "quick").mkdir(parents=True)
    (tmp_path / MAIN_JOB).mkdir()
    record(tmp_path / "chunk_size" / "full" / "runtime.json", 7216.0, "cold", "d1")
    record(tmp_path / "chunk_size" / "full" / "runtime.json", 594.0, "warm", "d2")
    info = {"seconds": 260.0, "cache": "cold", "finished": "d3", "cpu": "AMD EPYC 7B13"}
    (tmp_path / "chunk_size" / "quick" / "runtime.json").write_text(json.dumps(runtime_record(info, tmp_path / "x")))
    (tmp_path / MAIN_JOB / "runtime.json").write_text(json.dumps({"seconds": 246.0, "cache": "cold", "finished": "d4",
                                                                  "cpu": "Intel Xeon"}))
    lines = run_times_table(tmp_path).splitlines()
    assert lines[2] == "| `make reproduce` (main job) | 246 | cold | Intel Xeon | d4 | 246 | — |"
    assert lines[3] == "| 01_chunk_size (full) | 594 | warm | unrecorded | d2 | 7216 | 7216 |"
    assert lines[4] == "| 01_chunk_size (quick) | 260 | cold | AMD EPYC 7B13 | d3 | 260 | 260 |"
    assert len(lines) == 5  # studies without a record are left out


def test_a_run_refreshes_the_run_time_table_of_the_docs(tmp_path):
    """A notebook run or the main job writes its record and the docs' table at once, so running
    `make reproduce` before `make test` leaves nothing stale."""
    from grainlab.reproduce import RUN_TIMES_BEGIN, RUN_TIMES_END, refresh_run_times

    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "profiles.md"
    page.write_text(f"# x\n\n{RUN_TIMES_BEGIN}\nstale\n{RUN_TIMES_END}\n")
    (tmp_path / "results" / "main_job").mkdir(parents=True)
    (tmp_path / "results" / "main_job" / "runtime.json").write_text(json.dumps(
        {"seconds": 346.1, "cache": "cold", "finished": "d", "cpu": "AMD EPYC"}))
    assert not refresh_run_times(tmp_path, tmp_path / "elsewhere")  # another results folder: the page stays
    assert "stale" in page.read_text()
    assert refresh_run_times(tmp_path, tmp_path / "results")
    assert "| `make reproduce` (main job) | 346 | cold | AMD EPYC | d | 346 | — |" in page.read_text()
    assert "stale" not in page.read_text() and not refresh_run_times(tmp_path, tmp_path / "results")
