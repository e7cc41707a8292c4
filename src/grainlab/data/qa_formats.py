"""QA sources (SQuAD-format files, NQ-open oracle) in the BEIR shape plus answers."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

from grainlab.data.types import Dataset, Document
from grainlab.data.validate import decoded_lines
from grainlab.errors import MalformedData


def load_squad_format(path: Path, name: str) -> Dataset:
    """Each paragraph is a document; each answerable question is a query judged on it."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))["data"]
    except UnicodeDecodeError as exc:
        raise MalformedData(f"{path}: not UTF-8 (byte offset {exc.start}); copy or download the file again") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise MalformedData(f"{path}: not a SQuAD-format file with a top-level 'data' list ({exc})") from exc
    corpus: dict[str, Document] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    answers: dict[str, list[str]] = {}
    article_of: dict[str, int] = {}
    for a_index, article in enumerate(data):
        title = article.get("title") or ""
        for p_index, paragraph in enumerate(article.get("paragraphs", [])):
            if "context" not in paragraph:
                raise MalformedData(f"{path}: article {a_index} paragraph {p_index} has no 'context'")
            doc_id = str(paragraph.get("document_id", f"{a_index}-{p_index}"))
            if doc_id in corpus:
                doc_id = f"{doc_id}-{p_index}"
            corpus[doc_id] = Document(doc_id=doc_id, text=paragraph["context"], title=title)
            article_of[doc_id] = a_index
            for qa in paragraph.get("qas", []):
                if qa.get("is_impossible"):
                    continue
                texts = list(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a.get("text", "").strip()))
                if not texts:
                    continue
                qid = str(qa["id"])
                queries[qid] = qa["question"]
                qrels[qid] = {doc_id: 1}
                answers[qid] = texts
    return Dataset(name=name, corpus=corpus, queries=queries, qrels=qrels, answers=answers,
                   info={"source": str(path), "article_of": article_of})


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` for every non-blank line of a (possibly gzipped) JSON-lines file
    (blank lines are skipped, as the BEIR validator does); a line that is not JSON is a
    ``MalformedData`` error naming the file and line."""
    opener = gzip.open if path.suffix == ".gz" else open
    where = " of the unpacked file" if path.suffix == ".gz" else ""
    try:
        with opener(path, "rb") as handle:
            for number, line in decoded_lines(handle, path, where=where):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise MalformedData(f"{path}:{number}: not a JSON line ({exc})") from exc
    except (OSError, EOFError) as exc:  # a truncated or corrupt gzip stream
        raise MalformedData(f"{path}: cannot be read ({type(exc).__name__}: {exc}); copy or download it again") from None


def load_nq_oracle(path: Path, name: str) -> Dataset:
    """NQ-open oracle file: one question per line with its gold passage in ``ctxs``."""
    corpus: dict[str, Document] = {}
    by_text: dict[tuple[str, str], str] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    answers: dict[str, list[str]] = {}
    for number, record in read_jsonl(path):
        try:
            gold = next(c for c in record["ctxs"] if c.get("isgold", True))
            question, gold_answers = record["question"], record["answers"]
        except (KeyError, StopIteration) as exc:
            raise MalformedData(f"{path}:{number}: expected question, answers and a gold ctx ({exc})") from exc
        key = (gold["title"], gold["text"])
        doc_id = by_text.setdefault(key, f"nqgold-{len(by_text)}")
        corpus.setdefault(doc_id, Document(doc_id=doc_id, text=gold["text"], title=gold["title"]))
        qid = f"nq-{number - 1}"
        queries[qid] = question
        qrels[qid] = {doc_id: 1}
        answers[qid] = list(gold_answers)
    return Dataset(name=name, corpus=corpus, queries=queries, qrels=qrels, answers=answers,
                   info={"source": str(path)})
