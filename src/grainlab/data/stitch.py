"""Bhat et al. (2025): stitch a set's short documents into long ones.

Documents are concatenated in corpus order (SQuAD: article by article) until each
stitched document has at least ``min_chars`` characters; a question is kept only if
one of its gold answers occurs exactly once in its stitched document.
"""

from __future__ import annotations

from grainlab.data.types import Dataset, Document

SEPARATOR = "\n\n"


def stitch_documents(dataset: Dataset, min_chars: int = 50_000, separator: str = SEPARATOR) -> Dataset:
    """Long documents of ≥ ``min_chars`` characters; segments recorded in ``info['segments']``."""
    groups: list[list[Document]] = [[]]
    length = 0
    for doc in dataset.corpus.values():
        if length >= min_chars:
            groups.append([])
            length = 0
        length += (len(separator) if groups[-1] else 0) + len(doc.text)
        groups[-1].append(doc)
    if len(groups) > 1 and length < min_chars:
        groups[-2].extend(groups.pop())

    corpus: dict[str, Document] = {}
    home: dict[str, str] = {}
    segments: dict[str, list[tuple[str, int, int]]] = {}
    for index, group in enumerate(groups):
        stitched_id = f"{dataset.name}-stitched-{index}"
        parts, spans, cursor = [], [], 0
        for doc in group:
            spans.append((doc.doc_id, cursor, cursor + len(doc.text)))
            parts.append(doc.text)
            cursor += len(doc.text) + len(separator)
            home[doc.doc_id] = stitched_id
        corpus[stitched_id] = Document(doc_id=stitched_id, text=separator.join(parts))
        segments[stitched_id] = spans

    queries, qrels, answers = {}, {}, {}
    for qid, judged in dataset.qrels.items():
        source = next(iter(judged))
        target = home.get(source)
        if target is None:
            continue
        text = corpus[target].text
        unique = [a for a in dataset.answers.get(qid, []) if text.count(a) == 1]
        if not unique:
            continue
        queries[qid] = dataset.queries[qid]
        qrels[qid] = {target: 1}
        answers[qid] = unique
    info = {**dataset.info, "stitched_from": dataset.name, "min_chars": min_chars,
            "segments": segments, "questions_before": len(dataset.queries)}
    return Dataset(name=f"{dataset.name}_stitched", corpus=corpus, queries=queries,
                   qrels=qrels, answers=answers, info=info)
