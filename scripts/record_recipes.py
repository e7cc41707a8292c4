"""Record the recipes of the committed experiments whose data a study derived before recipes existed.

LongRAG's passage, document and group corpora (notebook 04, full profile) and the Japanese
articles with their generated questions (``grainlab compare``, ``results/japanese/full/``) are
built here exactly as they were; each manifest whose recorded fingerprint equals the built
dataset's gets its recipe (``experiments.manifest.record_recipe``). Nothing is recomputed; run
``grainlab verify --only longrag japanese`` after it.

    GRAINLAB_MIRROR=../shared/data python scripts/record_recipes.py [--results results]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grainlab import settings
from grainlab.data import load_dataset
from grainlab.experiments.manifest import record_recipe
from grainlab.studies.longrag import (
    document_corpus,
    merge_sources,
    passage_corpus,
    similarity_groups,
)
from grainlab.studies.your_documents import load_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=None)
    results = settings.results_dir(parser.parse_args().results)
    mirror = settings.mirror_dir()
    if mirror is None:
        raise SystemExit("set $GRAINLAB_MIRROR to the dataset mirror (../shared/data)")
    nq, squad = load_dataset("nq_open_oracle"), load_dataset("squad_dev")
    pool = merge_sources("wiki", [nq, squad], nq)
    documents = document_corpus(pool)
    built = {"longrag/full/passages": passage_corpus(pool, 100), "longrag/full/documents": documents,
             "longrag/full/grouped_documents": similarity_groups(documents, k=5, max_tokens=4000)}
    japanese = load_inputs(mirror / "japanese_rag_articles" / "*_*.txt",
                           settings.project_root() / "results/japanese/full/questions.jsonl").dataset
    built |= {"japanese/full/compare/experiment": japanese,
              "japanese/full/compare/side_by_side/experiment": japanese}
    for folder, dataset in built.items():
        written = record_recipe(results / folder / "manifest.json", dataset)
        print(f"{folder}: {'recipe recorded' if written else 'unchanged (has a recipe, or not this data)'}")


if __name__ == "__main__":
    main()
