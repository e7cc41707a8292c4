"""Known datasets: official download location and path inside a local mirror."""

from __future__ import annotations

from dataclasses import dataclass

from grainlab.errors import DatasetNotFound

BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{name}.zip"


@dataclass(frozen=True)
class DatasetSpec:
    """Where a dataset comes from and how to read it."""

    name: str
    kind: str  # "beir" | "squad" | "nq_oracle" | "litm_kv" | "litm_multidoc"
    url: str
    mirror_path: str  # relative to the mirror root
    description: str


LITM_RAW = "https://github.com/nelson-liu/lost-in-the-middle/raw/main"
LITM_POSITIONS = {10: (0, 4, 9), 20: (0, 4, 9, 14, 19), 30: (0, 4, 9, 14, 19, 24, 29)}


def _beir(name: str, mirror_path: str | None = None, note: str = "") -> DatasetSpec:
    return DatasetSpec(
        name=name,
        kind="beir",
        url=BEIR_URL.format(name=name),
        mirror_path=mirror_path or f"beir_{name.replace('-', '_')}",
        description=f"BEIR {name} (corpus, queries, test qrels){note}",
    )


REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in [
        _beir("scifact"),
        _beir("nfcorpus"),
        _beir("fiqa"),
        _beir("arguana", note="; drop hits whose id equals the query id"),
        _beir("scidocs"),
        _beir("trec-covid"),
        _beir("quora"),
        _beir("nq"),
        _beir("hotpotqa"),
        DatasetSpec(
            name="squad_dev",
            kind="squad",
            url="https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
            mirror_path="squad_v1.1_dev/dev-v1.1.json",
            description="SQuAD v1.1 dev: 48 Wikipedia articles, 2,067 paragraphs, 10,570 questions",
        ),
        DatasetSpec(
            name="covid_qa",
            kind="squad",
            url="https://raw.githubusercontent.com/deepset-ai/COVID-QA/master/data/question-answering/COVID-QA.json",
            mirror_path="covid_qa/200423_covidQA.json",
            description="COVID-QA (SQuAD format); the mirror holds the 2020-04-23 interim release "
            "(98 articles, 1,380 questions), the download the final one (147 articles, 2,019)",
        ),
        DatasetSpec(
            name="nq_open_oracle",
            kind="nq_oracle",
            url="https://github.com/nelson-liu/lost-in-the-middle/raw/main/qa_data/nq-open-oracle.jsonl.gz",
            mirror_path="lost_in_the_middle/qa_data/nq-open-oracle.jsonl.gz",
            description="NQ-open questions with their gold ~100-word Wikipedia passage (Liu et al.)",
        ),
        *[DatasetSpec(
            name=f"litm_kv_{keys}",
            kind="litm_kv",
            url=f"{LITM_RAW}/kv_retrieval_data/kv-retrieval-{keys}_keys.jsonl.gz",
            mirror_path=f"lost_in_the_middle/kv_retrieval_data/kv-retrieval-{keys}_keys.jsonl.gz",
            description=f"Lost in the Middle key–value retrieval, {keys} keys, 500 examples",
        ) for keys in (75, 140, 300)],
        *[DatasetSpec(
            name=f"litm_nq_{docs}docs_gold_at_{gold}",
            kind="litm_multidoc",
            url=f"{LITM_RAW}/qa_data/{docs}_total_documents/nq-open-{docs}_total_documents_gold_at_{gold}.jsonl.gz",
            mirror_path=f"lost_in_the_middle/qa_data/{docs}_total_documents/"
                        f"nq-open-{docs}_total_documents_gold_at_{gold}.jsonl.gz",
            description=f"Lost in the Middle official NQ-open file: {docs} documents, gold at {gold}",
        ) for docs, golds in LITM_POSITIONS.items() for gold in golds],
    ]
}


def get_spec(name: str) -> DatasetSpec:
    """The registry entry for ``name``, or an error listing the known names."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise DatasetNotFound(f"unknown dataset {name!r}; known datasets: {known}") from None
