"""IR metrics through ir-measures, per query, with unanswered queries scored 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import ir_measures
import pandas as pd

from grainlab.errors import ConfigError
from grainlab.evaluation.registry import parse_grainlab_measure

Qrels = Mapping[str, Mapping[str, int]]


def parse_measures(names: Iterable[str | ir_measures.Measure]) -> list[ir_measures.Measure]:
    """``["nDCG@10", "R@100"]`` → ir-measures objects (errors name the bad string)."""
    measures = []
    for name in names:
        if not isinstance(name, str):
            measures.append(name)
            continue
        if parse_grainlab_measure(name) is not None:
            raise ConfigError(f"{name!r} is a grainlab measure (grainlab.evaluation.registry), computed by the "
                              f"experiment, not by ir-measures")
        try:
            measure = ir_measures.parse_measure(name)
        except (ValueError, NameError, SyntaxError, TypeError) as exc:
            raise ConfigError(f"unknown measure {name!r} for ir-measures ({exc})") from exc
        cutoff = measure.params.get("cutoff")
        if cutoff is not None and (not isinstance(cutoff, int) or cutoff < 1):
            raise ConfigError(f"measure {name!r}: the cutoff after '@' must be a positive integer, got {cutoff!r}")
        measures.append(measure)
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
    """A TREC run file (``qid Q0 docid rank score tag``) as a run, best first.

    A missing file, undecodable bytes, a line without six fields, a non-finite score or a
    (query, document) pair given twice is a :class:`MalformedData` naming the file and line;
    a UTF-8 byte-order mark is ignored."""
    import math

    from grainlab.errors import DatasetNotFound, MalformedData

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DatasetNotFound(f"run file {path} cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise MalformedData(f"{path}:{line}: not UTF-8 (byte offset {exc.start}); write run files in UTF-8") from None
    run: dict[str, list[tuple[str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise MalformedData(f"{path}:{number}: expected 'qid Q0 docid rank score tag', got {line.strip()!r}")
        try:
            score = float(fields[4])
        except ValueError:
            raise MalformedData(f"{path}:{number}: score {fields[4]!r} is not a number") from None
        if not math.isfinite(score):
            raise MalformedData(f"{path}:{number}: score {fields[4]!r} is not finite; trec_eval cannot rank it")
        pair = (fields[0], fields[2])
        if pair in seen:
            raise MalformedData(f"{path}:{number}: document {pair[1]!r} is ranked twice for query {pair[0]!r} "
                                f"(first on line {seen[pair]}); a run lists each document once per query")
        seen[pair] = number
        run.setdefault(fields[0], []).append((fields[2], score))
    return {q: sorted(r, key=lambda x: -x[1]) for q, r in run.items()}


def run_overlap(run: Mapping[str, list[tuple[str, float]]], qrels: Qrels, doc_ids: Iterable[str]) -> list[str]:
    """Problems that make a run's scores meaningless against ``qrels``: no query in common, or no
    retrieved document in the corpus (a run for another dataset or split). Empty when it fits."""
    problems = []
    shared = set(run) & {q for q, docs in qrels.items() if docs}
    if not shared:
        problems.append(f"the run shares no query with the qrels ({len(run)} run queries, e.g. "
                        f"{sorted(run)[:3]}; qrels e.g. {sorted(qrels)[:3]}): is it for another dataset or split?")
    corpus = set(doc_ids)
    retrieved = {d for ranking in run.values() for d, _ in ranking}
    if retrieved and not retrieved & corpus:
        problems.append(f"none of the {len(retrieved)} retrieved documents is in the corpus "
                        f"(e.g. {sorted(retrieved)[:3]}): is the run for another dataset?")
    return problems


def write_trec_run(run: Mapping[str, list[tuple[str, float]]], path: str, tag: str = "grainlab") -> None:
    """Write a run in TREC format."""
    with open(path, "w", encoding="utf-8") as handle:
        for qid, ranking in run.items():
            for rank, (doc, score) in enumerate(ranking, start=1):
                handle.write(f"{qid} Q0 {doc} {rank} {float(score)!r} {tag}\n")
