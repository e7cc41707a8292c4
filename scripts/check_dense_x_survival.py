"""Independent check of Dense X's "recall by answer survival" split (README, Dense X).

Recomputes, without grainlab's answer matching, whether each question's gold passage still states
its answer after decomposition (SQuAD-style normalisation: lower case, no punctuation or
articles) from the committed ``propositions.csv.xz``, and splits the committed per-query recall
by it. Its differences should match ``results/dense_x/full/recall_by_answer_survival.csv``.
Run: ``GRAINLAB_MIRROR=../shared/data .venv/bin/python scripts/check_dense_x_survival.py``.
"""

from __future__ import annotations

import re
import string
import unicodedata
from pathlib import Path

import pandas as pd

from grainlab.data import load_dataset
from grainlab.studies import dense_x as study
from grainlab.studies.longrag import passage_corpus

RESULTS = Path(__file__).resolve().parents[1] / "results" / "dense_x" / "full"


def normalised(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if c in string.punctuation else c for c in text)
    return " " + " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split()) + " "


def states(text: str, answers: list[str]) -> bool:
    haystack = normalised(text)
    return any(normalised(a).strip() and normalised(a) in haystack for a in answers)


def main() -> None:
    passages = passage_corpus(study.article_subset(load_dataset("squad_dev"), 25), 100)
    props = pd.read_csv(RESULTS / "propositions.csv.xz").fillna("")
    units = {r.doc_id: r.propositions.replace(" || ", " ") or passages.corpus[r.doc_id].text for r in props.itertuples()}
    kept = {q: any(states(units[p], passages.answers[q]) for p in gold) for q, gold in passages.qrels.items()
            if any(states(passages.corpus[p].text, passages.answers[q]) for p in gold)}
    for retriever in ("BM25", "MiniLM", "bge-small"):
        per_query = pd.read_csv(RESULTS / retriever / "per_query.csv")
        for k in (5, 20):
            wide = per_query[per_query["measure"] == f"AnswerRecall@{k}"].pivot_table(index="qid", columns="unit",
                                                                                        values="value")
            wide = wide[wide.index.isin(kept)]
            wide["kept"] = wide.index.map(kept)
            for answer, rows in wide.groupby("kept"):
                print(f"{retriever:9s} R@{k:<2d} answer {'kept' if answer else 'dropped':7s} n={len(rows):5d}  "
                      f"passage {100 * rows['passage'].mean():5.1f}  proposition {100 * rows['proposition'].mean():5.1f}"
                      f"  ({100 * (rows['proposition'] - rows['passage']).mean():+.1f})")


if __name__ == "__main__":
    main()
