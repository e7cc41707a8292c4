"""Known datasets: official download location and path inside a local mirror."""

from __future__ import annotations

from dataclasses import dataclass

from grainlab.errors import DatasetNotFound

BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{name}.zip"


@dataclass(frozen=True)
class DatasetSpec:
    """Where a dataset comes from and how to read it."""

    name: str
    kind: str  # "beir" | "squad" | "nq_oracle" | "chroma_eval" | "litm_kv" | "litm_multidoc"
    url: str
    mirror_path: str  # relative to the mirror root
    description: str
    # Known releases: {"name", "counts": {split: {documents, queries, judgments}}, "sha256": {file: digest}};
    # a loaded copy must be byte-identical to one or have one's counts (see data.validate.check_release).
    releases: tuple[dict, ...] = ()
    md5: str = ""  # the publisher's MD5 of the file at ``url``, checked on download ("" when none is published)
    files: tuple[str, ...] = ()  # a folder of files fetched one by one from ``url`` + "/" + file (e.g. raw GitHub)
    # The queries are documents of the corpus (ArguAna's arguments, Quora's questions): as BEIR and
    # MTEB score them, a hit whose id equals the query id is dropped. No other dataset does this.
    queries_in_corpus: bool = False


LITM_RAW = "https://github.com/nelson-liu/lost-in-the-middle/raw/main"
CHROMA_RAW = ("https://raw.githubusercontent.com/brandonstarxel/chunking_evaluation/"
              "d451fc4cf56e417b755994b4ca5212fd5057c0d2/chunking_evaluation/evaluation_framework/general_evaluation_data")
CHROMA_SHA256 = {  # SOURCE.txt of the mirror copy (byte-for-byte from that commit)
    "questions_df.csv": "3ab3901889b8900f43775537bf12d36bd6614255fc59124faca31bede1dda7a3",
    "corpora/chatlogs.md": "543a98f82b2a6a492349fd7f8c9d6c3e78d1a4af81d13c79a7fd513c3f65bda6",
    "corpora/finance.md": "1c48d0156820abc88e46e5c992fa0cd2708b07ae59a3771b2b18234b7208561f",
    "corpora/pubmed.md": "0fd9242ffb253695e5d0f0215cb79a66a2a8f1236591e764c60d370747684ced",
    "corpora/state_of_the_union.md": "6fc21d560d31eb2421e337596feea0f83f1fa9ca02c6c4e47bc26959d7531b37",
    "corpora/wikitexts.md": "74cafcdb771185ecb9f22cc41b73e2e44477e0636ecf9cf1f96fd6ee0f4b86c0",
}
LITM_POSITIONS = {10: (0, 4, 9), 20: (0, 4, 9, 14, 19), 30: (0, 4, 9, 14, 19, 24, 29)}


# MD5 of each zip as published in BEIR's README (github.com/beir-cellar/beir, "Available Datasets").
BEIR_MD5 = {
    "scifact": "5f7d1de60b170fc8027bb7898e2efca1", "nfcorpus": "a89dba18a62ef92f7d323ec890a0d38d",
    "fiqa": "17918ed23cd04fb15047f73e6c3bd9d9", "arguana": "8ad3e3c2a5867cdced806d6503f29b99",
    "scidocs": "38121350fc3a4d2f48850f6aff52e4a9", "trec-covid": "ce62140cb23feb9becf6270d0d1fe6d1",
    "quora": "18fb154900ba42a600f84b839c173167", "nq": "d4d3d2e48787a744b6f6e691ff534307",
    "hotpotqa": "f412724f78b0d91183a0e86805e16114",
}


def _beir(name: str, mirror_path: str | None = None, note: str = "", releases: tuple[dict, ...] = (),
          queries_in_corpus: bool = False) -> DatasetSpec:
    return DatasetSpec(
        name=name,
        kind="beir",
        url=BEIR_URL.format(name=name),
        mirror_path=mirror_path or f"beir_{name.replace('-', '_')}",
        description=f"BEIR {name} (corpus, queries, test qrels){note}",
        releases=releases,
        md5=BEIR_MD5.get(name, ""),
        queries_in_corpus=queries_in_corpus,
    )


def _counts(documents: int, queries: int, judgments: int) -> dict[str, int]:
    return {"documents": documents, "queries": queries, "judgments": judgments}


SCIFACT_RELEASES = ({
    "name": "BEIR v1.0.0 (mirror copy)",
    "counts": {"test": _counts(5183, 300, 339)},
    "sha256": {"corpus.jsonl": "ae39e2b331413acd6c58c262e3d2c1bf2b4afb5407ccfa6d06dd3f06e5da1f28",
               "queries.jsonl": "8ff84a7c903f722981cd8d595c022660140c51867b27608a6d4910db86080313",
               "qrels/test.tsv": "0864bb985e0ca2367ba217977e72004d549054b2b06666ed9d4825ac7c21284c"},
},)


REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in [
        _beir("scifact", releases=SCIFACT_RELEASES),
        _beir("nfcorpus"),
        _beir("fiqa"),
        _beir("arguana", note="; hits whose id equals the query id are dropped", queries_in_corpus=True),
        _beir("scidocs"),
        _beir("trec-covid"),
        _beir("quora", note="; hits whose id equals the query id are dropped", queries_in_corpus=True),
        _beir("nq"),
        _beir("hotpotqa"),
        DatasetSpec(
            name="squad_dev",
            kind="squad",
            url="https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
            mirror_path="squad_v1.1_dev/dev-v1.1.json",
            description="SQuAD v1.1 dev: 48 Wikipedia articles, 2,067 paragraphs, 10,570 questions",
            md5="3e85deb501d4e538b6bc56f786231552",
            releases=({"name": "v1.1 dev", "counts": {"test": _counts(2067, 10570, 10570)},
                       "sha256": {"dev-v1.1.json": "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9"}},),
        ),
        DatasetSpec(
            name="covid_qa",
            kind="squad",
            url="https://raw.githubusercontent.com/deepset-ai/COVID-QA/master/data/question-answering/COVID-QA.json",
            mirror_path="covid_qa/200423_covidQA.json",
            description="COVID-QA (SQuAD format); the mirror holds the 2020-04-23 interim release "
            "(98 articles, 1,380 questions), the download the final one (147 articles, 2,019)",
            releases=({"name": "2020-04-23 interim (mirror)", "counts": {"test": _counts(98, 1380, 1380)},
                       "sha256": {"200423_covidQA.json": "ab310b4e39f726e087c8fa3d1787c73771dacddc584977204ebe3cc889ee1264"}},
                      {"name": "final (download)", "counts": {"test": _counts(147, 2019, 2019)}}),
        ),
        DatasetSpec(
            name="nq_open_oracle",
            kind="nq_oracle",
            url="https://github.com/nelson-liu/lost-in-the-middle/raw/main/qa_data/nq-open-oracle.jsonl.gz",
            mirror_path="lost_in_the_middle/qa_data/nq-open-oracle.jsonl.gz",
            description="NQ-open questions with their gold ~100-word Wikipedia passage (Liu et al.)",
            releases=({"name": "lost-in-the-middle qa_data", "counts": {"test": _counts(2600, 2655, 2655)},
                       "sha256": {"nq-open-oracle.jsonl.gz": "6a7f72b846f663a133ef952244e5a4e43f06bcf190afe34e8fbe687ce0d1653e"}},),
        ),
        DatasetSpec(
            name="chroma_chunking_eval",
            kind="chroma_eval",
            url=CHROMA_RAW,
            mirror_path="chroma_chunking_evaluation",
            description="Chroma's chunking evaluation (Smith & Troynikov 2024): 5 corpora, 472 questions with "
            "gold excerpts as character offsets (MIT)",
            releases=({"name": "chunking_evaluation @ d451fc4", "counts": {"test": _counts(5, 472, 472)},
                       "sha256": CHROMA_SHA256},),
            files=tuple(CHROMA_SHA256),
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
        raise DatasetNotFound(f"unknown dataset {name!r}; known datasets: {known}; or give a BEIR folder by "
                              f"path (./my_folder, /data/my_folder)") from None
