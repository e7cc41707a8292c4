"""Long documents from a set's short ones: Bhat et al.'s (2025) stitching, and whole articles.

``stitch_documents`` concatenates documents in corpus order (SQuAD: article by article) until
each stitched document has at least ``min_chars`` characters, so one stitched document can mix
articles. ``join_articles`` joins the paragraphs of each article only (SQuAD's
``info["article_of"]``): one coherent long document per article. Either way a question is kept
only if one of its gold answers occurs exactly once in its new document.
"""

from __future__ import annotations

from grainlab.data.types import Dataset, Document
from grainlab.errors import ConfigError

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
    return _joined(dataset, groups, "stitched", separator, {"min_chars": min_chars}, titled=False)


def join_articles(dataset: Dataset, separator: str = SEPARATOR) -> Dataset:
    """One document per article (paragraphs in corpus order), for sets that record
    ``info['article_of']`` (SQuAD)."""
    article_of = dataset.info.get("article_of")
    if not article_of:
        raise ConfigError(f"{dataset.name} records no articles (info['article_of']); join_articles needs a "
                          "SQuAD-format set")
    groups: dict[int, list[Document]] = {}
    for doc in dataset.corpus.values():
        groups.setdefault(article_of[doc.doc_id], []).append(doc)
    return _joined(dataset, list(groups.values()), "articles", separator, {}, titled=True)


def _joined(dataset: Dataset, groups: list[list[Document]], kind: str, separator: str, extra: dict,
            titled: bool) -> Dataset:
    """Each group's documents as one document ``<name>-<kind>-<i>`` (titled by its first member's
    title when ``titled``: an article's); questions whose gold answer occurs exactly once there."""
    corpus: dict[str, Document] = {}
    home: dict[str, str] = {}
    segments: dict[str, list[tuple[str, int, int]]] = {}
    for index, group in enumerate(groups):
        joined_id = f"{dataset.name}-{kind}-{index}"
        parts, spans, cursor = [], [], 0
        for doc in group:
            spans.append((doc.doc_id, cursor, cursor + len(doc.text)))
            parts.append(doc.text)
            cursor += len(doc.text) + len(separator)
            home[doc.doc_id] = joined_id
        corpus[joined_id] = Document(doc_id=joined_id, text=separator.join(parts),
                                     title=group[0].title if titled else "")
        segments[joined_id] = spans

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
    info = {**dataset.info, f"{kind}_from": dataset.name, **extra,
            "segments": segments, "questions_before": len(dataset.queries)}
    return Dataset(name=f"{dataset.name}_{kind}", corpus=corpus, queries=queries,
                   qrels=qrels, answers=answers, info=info)
