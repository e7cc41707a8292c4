"""IR metrics through ir-measures, per query, with unanswered queries scored 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, unquote

import ir_measures
import pandas as pd

from grainlab.errors import ConfigError
from grainlab.evaluation.registry import parse_grainlab_measure

IR_MEASURES_VERSION = "1"  # how grainlab hands runs and qrels to ir-measures; bump when that changes a value

Qrels = Mapping[str, Mapping[str, int]]


def parse_measures(names: str | ir_measures.Measure | Iterable[str | ir_measures.Measure]) -> list[ir_measures.Measure]:
    """``["nDCG@10", "R@100"]`` (or one name, ``"nDCG@10"``) → ir-measures objects; errors name
    the bad string and, for a name in the wrong case (``ndcg@10``), the one meant."""
    if isinstance(names, (str, ir_measures.Measure)):
        names = [names]
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
            raise ConfigError(f"unknown measure {name!r} for ir-measures ({exc}){_did_you_mean(name)}") from exc
        cutoff = measure.params.get("cutoff")
        if cutoff is not None and (not isinstance(cutoff, int) or cutoff < 1):
            raise ConfigError(f"measure {name!r}: the cutoff after '@' must be a positive integer, got {cutoff!r}")
        measures.append(measure)
    return measures


def _did_you_mean(name: str) -> str:
    """``"; did you mean 'nDCG@10'?"`` when ``name`` is an ir-measures name in another case."""
    head, sep, tail = name.partition("@")
    base, paren, params = head.partition("(")
    matches = [known for known in ir_measures.measures.registry if known.lower() == base.lower() and known != base]
    return f"; did you mean {matches[0] + paren + params + sep + tail!r}?" if matches else ""


def evaluate_run(run: Mapping[str, list[tuple[str, float]]], qrels: Qrels,
                 measures: str | Iterable[str | ir_measures.Measure], ignore_identical_ids: bool = False) -> pd.DataFrame:
    """Per-query values: columns ``qid, measure, value``; every judged query appears,
    with 0 for a query the run does not answer (as trec_eval ``-c``).

    ``ignore_identical_ids`` drops a hit whose id equals the query id — BEIR's and MTEB's convention
    for datasets whose queries are in the corpus (ArguAna, Quora: the registry's
    ``queries_in_corpus``, ``dataset.info["queries_in_corpus"]``). It is off by default: on any
    other dataset a document that shares its query's id is an ordinary document."""
    parsed = parse_measures(measures)
    run_dict = {qid: {doc: float(score) for doc, score in ranking if not (ignore_identical_ids and doc == qid)}
                for qid, ranking in run.items() if ranking}
    qrels_dict = {qid: dict(docs) for qid, docs in qrels.items() if docs}
    values = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(parsed, qrels_dict, run_dict)}
    rows = [(qid, str(measure), float(values.get((qid, str(measure)), 0.0)))
            for qid in qrels_dict for measure in parsed]
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def read_trec_run(path: str, decode_ids: bool = False) -> dict[str, list[tuple[str, float]]]:
    """A TREC run file (``qid Q0 docid rank score tag``; gzipped when it ends in ``.gz``, as
    trec_eval users keep them) as a run, best first.

    A missing file, undecodable bytes, a line without six fields, a non-finite score or a
    (query, document) pair given twice is a :class:`MalformedData` naming the file and line;
    a UTF-8 byte-order mark is ignored. ``decode_ids`` reads back the ``%XX`` escapes that
    :func:`write_trec_run` writes for ids holding whitespace (grainlab's own saved runs)."""
    import gzip
    import math
    import zlib

    from grainlab.errors import DatasetNotFound, MalformedData

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DatasetNotFound(f"run file {path} cannot be read: {exc.strerror}") from None
    if raw[:2] == b"\x1f\x8b":  # gzip's magic number, whatever the file is called
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise MalformedData(f"{path}: a gzip file that cannot be decompressed ({exc}); "
                                f"is it cut short? gunzip -t {path}") from None
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
        qid, doc = (unquote(fields[0]), unquote(fields[2])) if decode_ids else (fields[0], fields[2])
        run.setdefault(qid, []).append((doc, score))
    return {q: sorted(r, key=lambda x: -x[1]) for q, r in run.items()}


def run_overlap(run: Mapping[str, list[tuple[str, float]]], qrels: Qrels, doc_ids: Iterable[str]) -> list[str]:
    """Problems that make a run's scores wrong or meaningless against ``qrels``, each with its
    counts: no query in common, run queries the qrels do not judge (with a hint when the ids match
    once leading zeros are dropped), judged queries the run does not answer (scored 0), judged
    queries without a positive judgment (every measure is 0 for them), or no retrieved document in
    the corpus (a run for another dataset or split). Empty when the run fits."""
    problems = []
    judged = {q for q, docs in qrels.items() if docs}
    answered = {q for q, ranking in run.items() if ranking}
    shared = answered & judged
    if not shared:
        problems.append(f"the run shares no query with the qrels ({len(run)} run queries, e.g. "
                        f"{sorted(run)[:3]}; qrels e.g. {sorted(qrels)[:3]}): is it for another dataset or split?")
    unknown, missing = sorted(answered - judged), sorted(judged - answered)
    if shared and unknown:
        unpadded = {q.lstrip("0") or "0" for q in judged}
        hint = (" — they match once leading zeros are dropped: write the ids as the qrels do"
                if sum((q.lstrip("0") or "0") in unpadded for q in unknown) > len(unknown) / 2 else "")
        problems.append(f"{len(unknown)} of {len(answered)} run queries are not judged in the qrels and are "
                        f"ignored (e.g. {unknown[:3]}){hint}")
    if shared and missing:
        problems.append(f"{len(missing)} of {len(judged)} judged queries are not in the run and score 0 "
                        f"(e.g. {missing[:3]})")
    unanswerable = sorted(q for q in judged if not any(grade > 0 for grade in qrels[q].values()))
    if unanswerable:
        problems.append(f"{len(unanswerable)} of {len(judged)} judged queries have no positive judgment "
                        f"(relevance > 0), so every measure is 0 for them (e.g. {unanswerable[:3]}): "
                        f"is the relevance the third column of the qrels?")
    corpus = set(doc_ids)
    retrieved = {d for ranking in run.values() for d, _ in ranking}
    if retrieved and not retrieved & corpus:
        problems.append(f"none of the {len(retrieved)} retrieved documents is in the corpus "
                        f"(e.g. {sorted(retrieved)[:3]}): is the run for another dataset?")
    return problems


def quote_id(identifier: str) -> str:
    """An id as one TREC field: whitespace and ``%`` written as ``%XX`` (``"doc 1"`` → ``doc%201``),
    every other character as it is; :func:`read_trec_run` with ``decode_ids=True`` reads it back."""
    if not any(c.isspace() or c == "%" for c in identifier):
        return identifier
    return "".join(quote(c, safe="") if c.isspace() or c == "%" else c for c in identifier)


def write_trec_run(run: Mapping[str, list[tuple[str, float]]], path: str, tag: str = "grainlab") -> None:
    """Write a run in TREC format. BEIR ids may hold spaces, which a whitespace-separated TREC line
    cannot: such ids are written with ``%XX`` escapes (:func:`quote_id`), read back exactly by
    ``read_trec_run(path, decode_ids=True)``."""
    with open(path, "w", encoding="utf-8") as handle:
        for qid, ranking in run.items():
            for rank, (doc, score) in enumerate(ranking, start=1):
                handle.write(f"{quote_id(qid)} Q0 {quote_id(doc)} {rank} {float(score)!r} {tag}\n")
