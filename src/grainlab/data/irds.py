"""Datasets by ir_datasets id: ``load_dataset("irds:beir/scifact/test")``.

ir_datasets (an optional extra: ``pip install 'grainlab[irds]'``) reads its own local copy
(``~/.ir_datasets`` or ``$IR_DATASETS_HOME``) and downloads what is missing when online; offline,
a dataset it has no copy of fails with one line saying how to fetch it where there is a network.
Documents map onto grainlab's shape as BEIR's loader maps them: text = ``title + " " + text``
when the dataset has titles, so the same files give the same scores either way.
"""

from __future__ import annotations

from typing import Any

from grainlab.data.beir_format import document_text
from grainlab.data.types import Dataset, Document
from grainlab.errors import ConfigError, DatasetNotFound

PREFIX = "irds:"


def is_irds(name: str) -> bool:
    return name.startswith(PREFIX)


def _module() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise ConfigError("irds: dataset ids need ir_datasets: pip install 'grainlab[irds]' (or ir-datasets)") from None
    return ir_datasets


def _text(record: Any) -> str:
    """A document's or query's text: title and body joined as BEIR does, else its default text."""
    fields = getattr(record, "_fields", ())
    if "text" in fields:
        return document_text(str(getattr(record, "title", "") or ""), str(record.text))
    return str(record.default_text())


def load_irds(name: str) -> Dataset:
    """The ir_datasets dataset ``irds:<id>`` (documents, queries, qrels) as a grainlab dataset."""
    dataset_id = name[len(PREFIX):]
    ir_datasets = _module()
    try:
        source = ir_datasets.load(dataset_id)
    except KeyError:
        raise DatasetNotFound(f"ir_datasets has no dataset {dataset_id!r}: see https://ir-datasets.com for the ids") \
            from None
    missing = [part for part, has in (("documents", source.has_docs()), ("queries", source.has_queries()),
                                      ("qrels", source.has_qrels())) if not has]
    if missing:
        raise ConfigError(f"{name} has no {' or '.join(missing)}: name a split that has all three "
                          f"(e.g. irds:beir/scifact/test)")
    try:
        corpus = {d.doc_id: Document(d.doc_id, _text(d), str(getattr(d, "title", "") or ""))
                  for d in source.docs_iter()}
        queries = {q.query_id: _text(q) for q in source.queries_iter()}
        qrels: dict[str, dict[str, int]] = {}
        for judgment in source.qrels_iter():
            qrels.setdefault(judgment.query_id, {})[judgment.doc_id] = int(judgment.relevance)
    except Exception as exc:  # ir_datasets raises its own, requests' and OS errors when it must download
        raise DatasetNotFound(
            f"{name}: ir_datasets has no local copy here and could not download it ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:160] if str(exc) else 'no message'}); where you are online run "
            f"`ir_datasets export {dataset_id} docs > /dev/null` (and queries, qrels), then copy "
            f"~/.ir_datasets or set $IR_DATASETS_HOME") from None
    return Dataset(name, corpus, queries, qrels, info={"source": f"ir_datasets {dataset_id}",
                                                       "text": "title + ' ' + text"})
