"""IR metrics through ir-measures, per query, with unanswered queries scored 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import ir_measures
import pandas as pd

from grainlab.errors import ConfigError

Qrels = Mapping[str, Mapping[str, int]]


def parse_measures(names: Iterable[str | ir_measures.Measure]) -> list[ir_measures.Measure]:
    """``["nDCG@10", "R@100"]`` → ir-measures objects (errors name the bad string)."""
    measures = []
    for name in names:
        if not isinstance(name, str):
            measures.append(name)
            continue
        try:
            measures.append(ir_measures.parse_measure(name))
        except (ValueError, NameError, SyntaxError) as exc:
            raise ConfigError(f"unknown measure {name!r} for ir-measures ({exc})") from exc
    return measures


def evaluate_run(run: Mapping[str, list[tuple[str, float]]], qrels: Qrels,
                 measures: Iterable[str | ir_measures.Measure], ignore_identical_ids: bool = True) -> pd.DataFrame:
    """Per-query values: columns ``qid, measure, value``; every judged query appears,
    with 0 for a query the run does not answer (as trec_eval ``-c``). As BEIR and MTEB do,
    a hit whose id equals the query id is dropped (ArguAna's queries are in its corpus)."""
    parsed = parse_measures(measures)
    run_dict = {qid: {doc: float(score) for doc, score in ranking if not (ignore_identical_ids and doc == qid)}
                for qid, ranking in run.items() if ranking}
    qrels_dict = {qid: dict(docs) for qid, docs in qrels.items() if docs}
    values = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(parsed, qrels_dict, run_dict)}
    rows = [(qid, str(measure), float(values.get((qid, str(measure)), 0.0)))
            for qid in qrels_dict for measure in parsed]
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def read_trec_run(path: str) -> dict[str, list[tuple[str, float]]]:
    """A TREC run file (``qid Q0 docid rank score tag``) as a run, best first."""
    from grainlab.errors import MalformedData

    run: dict[str, list[tuple[str, float]]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            fields = line.split()
            if len(fields) != 6:
                raise MalformedData(f"{path}:{number}: expected 'qid Q0 docid rank score tag', got {line.strip()!r}")
            try:
                run.setdefault(fields[0], []).append((fields[2], float(fields[4])))
            except ValueError as exc:
                raise MalformedData(f"{path}:{number}: score {fields[4]!r} is not a number") from exc
    return {q: sorted(r, key=lambda x: -x[1]) for q, r in run.items()}


def write_trec_run(run: Mapping[str, list[tuple[str, float]]], path: str, tag: str = "grainlab") -> None:
    """Write a run in TREC format."""
    with open(path, "w", encoding="utf-8") as handle:
        for qid, ranking in run.items():
            for rank, (doc, score) in enumerate(ranking, start=1):
                handle.write(f"{qid} Q0 {doc} {rank} {float(score)!r} {tag}\n")
