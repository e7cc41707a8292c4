"""Chroma's chunking evaluation (Smith & Troynikov 2024): five corpora and 472 questions whose gold
excerpts are character offsets into them.

Each corpus is one document (``chatlogs``, ``finance``, ``pubmed``, ``state_of_the_union``,
``wikitexts``); a question is judged relevant to its corpus, its answers are its excerpts' texts
and its gold spans (``info["gold_spans"]``) their published offsets, checked on loading:
``corpus[start:end] == content``. Texts are read as the official code reads them (UTF-8, universal
newlines), so the offsets agree.
"""

from __future__ import annotations

import json
from pathlib import Path

from grainlab.data.types import Dataset, Document
from grainlab.errors import MalformedData

CORPORA = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
QUESTIONS = "questions_df.csv"
FILES = (QUESTIONS, *(f"corpora/{c}.md" for c in CORPORA))


def load_chroma_eval(folder: Path, name: str) -> Dataset:
    """The evaluation as a dataset (see the module docstring); a malformed or misplaced excerpt is
    a :class:`MalformedData` naming the question's row."""
    import pandas as pd

    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise MalformedData(f"{folder}: missing {missing}; copy the whole folder (or delete it to download again)")
    corpus = {c: Document(c, (folder / f"corpora/{c}.md").read_text(encoding="utf-8"), c) for c in CORPORA}
    try:
        table = pd.read_csv(folder / QUESTIONS, dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedData(f"{folder / QUESTIONS}: not a readable CSV ({exc})") from None
    if list(table.columns[:3]) != ["question", "references", "corpus_id"]:
        raise MalformedData(f"{folder / QUESTIONS}: expected columns question, references, corpus_id; "
                            f"got {list(table.columns)}")
    queries, qrels, answers, spans = {}, {}, {}, {}
    for row, (question, references, corpus_id) in enumerate(table[["question", "references", "corpus_id"]]
                                                            .itertuples(index=False)):
        where = f"{folder / QUESTIONS}, row {row} ({question[:50]!r})"
        if corpus_id not in corpus:
            raise MalformedData(f"{where}: unknown corpus {corpus_id!r}; known: {list(CORPORA)}")
        try:
            excerpts = json.loads(references)
            found = [(str(x["content"]), int(x["start_index"]), int(x["end_index"])) for x in excerpts]
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedData(f"{where}: references are not a JSON list of content/start_index/end_index "
                                f"({type(exc).__name__}: {exc})") from None
        text = corpus[corpus_id].text
        for content, start, end in found:
            if text[start:end] != content:
                raise MalformedData(f"{where}: the excerpt at {start}:{end} of {corpus_id} reads "
                                    f"{text[start:end][:40]!r}, not {content[:40]!r}; the corpus and the "
                                    "questions are from different versions")
        qid = f"q{row}"
        queries[qid], qrels[qid] = question, {corpus_id: 1}
        answers[qid] = [content for content, _, _ in found]
        spans[qid] = [(corpus_id, start, end) for _, start, end in found]
    return Dataset(name, corpus, queries, qrels, answers, info={"gold_spans": spans, "source": str(folder)})
