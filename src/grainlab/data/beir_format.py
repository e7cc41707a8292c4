"""BEIR-format folders through ``beir``'s own ``GenericDataLoader``, validated first."""

from __future__ import annotations

from pathlib import Path

from grainlab.data.types import Dataset, Document
from grainlab.data.validate import check_jsonl, check_qrels_tsv
from grainlab.errors import DatasetNotFound, MalformedData


def document_text(title: str, text: str) -> str:
    """Title and body joined as BEIR/MTEB encode them: ``title + " " + text``."""
    return f"{title} {text}".strip() if title else text


def load_beir_folder(folder: Path, name: str, split: str = "test") -> Dataset:
    """Load ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{split}.tsv`` from ``folder``."""
    from beir.datasets.data_loader import GenericDataLoader

    corpus_file, queries_file = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels_file = folder / "qrels" / f"{split}.tsv"
    for path in (corpus_file, queries_file, qrels_file):
        if not path.exists():
            raise DatasetNotFound(f"{path} is missing; a BEIR folder needs corpus.jsonl, queries.jsonl and qrels/{split}.tsv")
    for path, count in ((corpus_file, check_jsonl(corpus_file, required=("_id", "text"))),
                        (queries_file, check_jsonl(queries_file, required=("_id", "text"))),
                        (qrels_file, check_qrels_tsv(qrels_file))):
        if count == 0:
            raise MalformedData(f"{path} holds no records: copy or download the dataset again")
    corpus, queries, qrels = GenericDataLoader(data_folder=str(folder)).load(split=split)
    documents = {
        doc_id: Document(doc_id=doc_id, text=document_text(fields.get("title", ""), fields["text"]),
                         title=fields.get("title", ""))
        for doc_id, fields in corpus.items()
    }
    qrels = {qid: {did: int(rel) for did, rel in docs.items()} for qid, docs in qrels.items()}
    return Dataset(name=name, corpus=documents, queries=dict(queries), qrels=qrels,
                   info={"source": str(folder), "split": split, "text": "title + ' ' + text"})
