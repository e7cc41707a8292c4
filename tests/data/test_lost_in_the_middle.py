"""Lost-in-the-Middle inputs: official-file parsing, gold placement, key–value records, positions."""

import gzip
import json

import pytest

from grainlab.data.lost_in_the_middle import (
    KVExample,
    MultiDocExample,
    load_kv_examples,
    load_multidoc_file,
    positions,
)
from grainlab.errors import ConfigError, MalformedData


def write_jsonl(path, rows):
    with gzip.open(path, "wt") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def test_official_file_shape(tmp_path):
    ctxs = [{"title": "D1", "text": "x", "isgold": False}, {"title": "G", "text": "gold text", "isgold": True},
            {"title": "D2", "text": "y", "isgold": False}]
    path = write_jsonl(tmp_path / "f.jsonl.gz", [{"question": "q?", "answers": ["a"], "ctxs": ctxs}])
    (example,) = load_multidoc_file(path)
    assert example.gold == ("G", "gold text") and example.distractors == [("D1", "x"), ("D2", "y")]
    assert example.info["gold_index_in_file"] == 1
    bad = write_jsonl(tmp_path / "bad.jsonl.gz", [{"question": "q?", "answers": ["a"], "ctxs": ctxs[:1]}])
    with pytest.raises(MalformedData, match="bad.jsonl.gz:1"):
        load_multidoc_file(bad)


def test_gold_inserted_at_index_with_most_relevant_distractors():
    example = MultiDocExample("q", "q?", ["a"], ("G", "g"), [(f"D{i}", "") for i in range(5)])
    assert [t for t, _ in example.documents(4, 0)] == ["G", "D0", "D1", "D2"]
    assert [t for t, _ in example.documents(4, 3)] == ["D0", "D1", "D2", "G"]
    assert [t for t, _ in example.documents(4, 2)] == ["D0", "D1", "G", "D2"]
    with pytest.raises(ConfigError):
        example.documents(4, 4)
    with pytest.raises(ConfigError, match="distractors"):
        example.documents(10, 0)


def test_kv_gold_moves_others_keep_order():
    example = KVExample([("k0", "v0"), ("k1", "v1"), ("k2", "v2"), ("k3", "v3")], "k1", "v1")
    assert example.with_gold_at(0) == [("k1", "v1"), ("k0", "v0"), ("k2", "v2"), ("k3", "v3")]
    assert example.with_gold_at(3) == [("k0", "v0"), ("k2", "v2"), ("k3", "v3"), ("k1", "v1")]
    short = example.shortened(3)
    assert short.with_gold_at(2) == [("k0", "v0"), ("k2", "v2"), ("k1", "v1")]
    with pytest.raises(ConfigError):
        example.shortened(1)


def test_paper_positions():
    assert positions(10, 3) == [0, 4, 9]
    assert positions(20) == [0, 4, 9, 14, 19]
    assert positions(140) == [0, 34, 69, 104, 139]
    assert positions(30, 7) == [0, 4, 9, 14, 19, 24, 29]


@pytest.mark.mirror
def test_mirror_kv_files(mirror):
    examples = load_kv_examples(75, mirror=mirror)
    assert len(examples) == 500 and all(len(e.records) == 75 for e in examples[:5])
    assert (examples[0].key, examples[0].value) in examples[0].records


def test_jsonl_reader_skips_blank_lines_and_names_a_bad_one(tmp_path):
    from grainlab.data.qa_formats import read_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\nnot json\n', encoding="utf-8")
    rows = read_jsonl(path)
    assert next(rows) == (1, {"a": 1}) and next(rows) == (4, {"a": 2})
    with pytest.raises(MalformedData, match=r"rows\.jsonl:5: not a JSON line"):
        next(rows)
