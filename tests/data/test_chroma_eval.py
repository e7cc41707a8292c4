"""Chroma's chunking evaluation as a dataset: every excerpt at its offsets, clear errors otherwise."""

import json

import pytest

from grainlab.data import load_dataset
from grainlab.data.chroma_eval import CORPORA, load_chroma_eval
from grainlab.errors import MalformedData


def test_the_mirror_copy_loads_with_every_excerpt_in_place(mirror):
    data = load_dataset("chroma_chunking_eval", mirror=mirror)
    assert sorted(data.corpus) == sorted(CORPORA) and len(data.queries) == 472
    spans = data.info["gold_spans"]
    assert sum(len(s) for s in spans.values()) == 790
    for qid, excerpts in spans.items():
        assert data.qrels[qid] == {excerpts[0][0]: 1}
        assert [data.corpus[d].text[s:e] for d, s, e in excerpts] == data.answers[qid]
    # the finance corpus repeats filings: most of its excerpts occur more than once
    finance = [data.corpus[d].text[s:e] for q in spans for d, s, e in spans[q] if d == "finance"]
    assert sum(data.corpus["finance"].text.count(t) > 1 for t in finance) > len(finance) / 2


def _folder(tmp_path, references):
    (tmp_path / "corpora").mkdir()
    for name in CORPORA:
        (tmp_path / "corpora" / f"{name}.md").write_text(f"{name}: the sky is blue.\nGrass is green.\n")
    row = json.dumps(references).replace('"', '""')
    (tmp_path / "questions_df.csv").write_text(f'question,references,corpus_id\nWhat colour?,"{row}",chatlogs\n')
    return tmp_path


def test_a_small_folder_loads(tmp_path):
    start = len("chatlogs: ")
    data = load_chroma_eval(_folder(tmp_path, [{"content": "the sky is blue", "start_index": start,
                                                "end_index": start + 15}]), "toy")
    assert data.info["gold_spans"] == {"q0": [("chatlogs", start, start + 15)]}
    assert data.answers == {"q0": ["the sky is blue"]}


@pytest.mark.parametrize("references, message", [
    ([{"content": "the sky is blue", "start_index": 0, "end_index": 15}], "row 0 .* reads 'chatlogs: the s'"),
    ([{"content": "x"}], "not a JSON list of content/start_index/end_index"),
])
def test_misplaced_or_malformed_excerpts_name_the_row(tmp_path, references, message):
    with pytest.raises(MalformedData, match=message):
        load_chroma_eval(_folder(tmp_path, references), "toy")


def test_a_missing_corpus_file_is_named(tmp_path):
    folder = _folder(tmp_path, [])
    (folder / "corpora" / "pubmed.md").unlink()
    with pytest.raises(MalformedData, match="corpora/pubmed.md"):
        load_chroma_eval(folder, "toy")
