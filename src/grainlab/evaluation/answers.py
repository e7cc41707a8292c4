"""Answer-string recall: a hit is a normalised gold answer inside a retrieved text."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Mapping

import pandas as pd

from grainlab.evaluation.registry import ANSWER_RECALL

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation after Unicode NFD: lowercase, no punctuation, no articles, single spaces."""
    return squad_normalize(unicodedata.normalize("NFD", text))


def has_answer(text: str, answers: Iterable[str]) -> bool:
    """True if some normalised answer occurs in the normalised text as whole words."""
    haystack = f" {normalize_answer(text)} "
    return any(needle.strip() and f" {needle} " in haystack for needle in map(normalize_answer, answers))


def answer_recall(run: Mapping[str, list[tuple[str, float]]], unit_text: Mapping[str, str],
                  answers: Mapping[str, list[str]], ks: Iterable[int]) -> pd.DataFrame:
    """Per-query ``AnswerRecall@k``: 1 if any of the top-k units contains a gold answer."""
    ks = sorted(ks)
    rows = []
    for qid, gold in answers.items():
        ranking = run.get(qid, [])
        first_hit = next((rank for rank, (uid, _) in enumerate(ranking, start=1)
                          if has_answer(unit_text[uid], gold)), None)
        for k in ks:
            rows.append((qid, ANSWER_RECALL @ k, float(first_hit is not None and first_hit <= k)))
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def squad_normalize(text: str) -> str:
    """The SQuAD evaluation script's normalisation, as Liu et al. use it: lowercase, drop
    punctuation, drop articles, collapse whitespace (no Unicode folding)."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def first_line(prediction: str) -> str:
    """A prediction up to its first newline, stripped (so copying the context cannot score)."""
    return prediction.split("\n")[0].strip()


def best_subspan_em(prediction: str, answers: Iterable[str]) -> float:
    """Liu et al.'s metric: 1.0 if some normalised gold answer is a substring of the normalised
    first line of the prediction."""
    normalized = squad_normalize(first_line(prediction))
    return float(any(squad_normalize(answer) in normalized for answer in answers))


def kv_accuracy(prediction: str, value: str) -> float:
    """Key–value retrieval: 1.0 if the value occurs in the prediction (case-insensitive), as the paper scores it."""
    return float(value.lower() in prediction.lower())


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    """SQuAD exact match: 1.0 if the normalised first line of the prediction equals a normalised gold answer."""
    normalized = squad_normalize(first_line(prediction))
    return float(any(squad_normalize(answer) == normalized for answer in answers))
