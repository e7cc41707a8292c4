"""Lost in the Middle runs: reader accuracy by the gold passage's position, closed-book and
oracle baselines, and the key–value retrieval curve — tidy rows, one per question × setting.

Generations are cached by the reader one prompt at a time, so an interrupted run resumes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.data import load_dataset
from grainlab.data.lost_in_the_middle import (
    KVExample,
    MultiDocExample,
    load_kv_examples,
    load_official_multidoc,
)
from grainlab.data.types import Dataset
from grainlab.evaluation.answers import best_subspan_em, first_line, kv_accuracy
from grainlab.evaluation.significance import bootstrap_ci, paired_comparison
from grainlab.evaluation.verdicts import NOT_REPRODUCED, REPRODUCED
from grainlab.experiments.reader_rows import ReaderRow, ReaderRows
from grainlab.experiments.tables import paired_between
from grainlab.readers import get_reader, limits
from grainlab.readers.base import Reader
from grainlab.readers.prompts import closedbook_prompt, kv_prompt, qa_prompt
from grainlab.studies.claims import Claim, verdict_table
from grainlab.studies.multidoc import build_multidoc_examples
from grainlab.studies.report import Report
from grainlab.studies.token_limits import token_limit_table

# Liu et al. (TACL 2024), GPT-3.5-Turbo on NQ-open, best_subspan_em; positions are 1-based.
PAPER_QA = pd.DataFrame(
    [{"setting": "20 documents", "position": p, "accuracy": a}
     for p, a in zip((1, 5, 10, 15, 20), (0.758, 0.572, 0.538, 0.554, 0.632))]
    + [{"setting": "10 documents", "position": p, "accuracy": a} for p, a in zip((1, 5, 10), (0.768, 0.612, 0.624))])
PAPER_BASELINES = {"closed-book": 0.561, "oracle": 0.883}
PAPER_READER = "GPT-3.5-Turbo"
# Key–value retrieval, 140 keys, MPT-30B (the repository's EXPERIMENTS.md).
PAPER_KV_140 = pd.DataFrame(
    [{"setting": "140 keys", "position": p, "accuracy": a}
     for p, a in zip((1, 35, 70, 105, 140), (1.0, 0.936, 0.886, 0.804, 0.962))])


def _rows(reader: Reader, jobs: list[dict], prompts: list[str], score) -> pd.DataFrame:
    generations = limits.generate(reader, prompts)
    rows = []
    for job, generation in zip(jobs, generations):
        rows.append({**job, "model": reader.model_id, "prediction": first_line(generation.text),
                     "correct": score(job, generation.text), "prompt_tokens": generation.prompt_tokens,
                     "new_tokens": generation.new_tokens, "max_new_tokens": reader.max_new_tokens,
                     "seconds": generation.seconds,
                     "cached": generation.cached})
    return pd.DataFrame(rows)


def qa_row_prompt(example: MultiDocExample, n_docs: int, gold_index: int) -> str:
    """The prompt of one QA row: closed-book (``n_docs`` 0), the oracle (the gold passage alone:
    ``n_docs`` 1), else ``n_docs`` documents with the gold one at ``gold_index`` (0-based)."""
    if n_docs == 0:
        return closedbook_prompt(example.question)
    if n_docs == 1:
        return qa_prompt(example.question, [example.gold])
    return qa_prompt(example.question, example.documents(n_docs, gold_index))


def kv_row_prompt(example: KVExample, gold_index: int) -> str:
    """The prompt of one key–value row: the queried pair at ``gold_index`` (0-based)."""
    return kv_prompt(example.with_gold_at(gold_index), example.key)


def qa_position_runs(examples: Sequence[MultiDocExample], reader: Reader,
                     settings: dict[int, Sequence[int]], closed_book: bool = True,
                     oracle: bool = True) -> pd.DataFrame:
    """``settings`` maps a document count to the gold positions to test (0-based)."""
    jobs = []
    for example in examples:
        base = {"qid": example.qid, "answers": "|".join(example.answers)}
        for n_docs, golds in settings.items():
            jobs += [{**base, "setting": f"{n_docs} documents", "n_docs": n_docs, "gold_index": gold} for gold in golds]
        if closed_book:
            jobs.append({**base, "setting": "closed-book", "n_docs": 0, "gold_index": -1})
        if oracle:
            jobs.append({**base, "setting": "oracle", "n_docs": 1, "gold_index": 0})
    by_qid = {example.qid: example for example in examples}
    prompts = [qa_row_prompt(by_qid[job["qid"]], job["n_docs"], job["gold_index"]) for job in jobs]
    return _rows(reader, jobs, prompts, lambda job, text: qa_score(text, job["answers"]))


def qa_score(text: str, answers: str) -> float:
    """A QA row's measure: best-subspan EM of the generation against its ``|``-joined answers."""
    return best_subspan_em(text, answers.split("|"))


def kv_position_runs(examples: Sequence[KVExample], reader: Reader, golds: Sequence[int]) -> pd.DataFrame:
    """Key–value retrieval accuracy with the queried pair at each index in ``golds``. An example's
    prompts are made last position first: each shares the records before its gold pair with the
    one before it, which a reader that caches the prompt prefix (llama.cpp) does not read again."""
    jobs, prompts = [], []
    for number, example in enumerate(examples):
        for gold in sorted(golds, reverse=True):
            jobs.append({"qid": f"kv-{number}", "setting": f"{len(example.records)} keys", "n_docs": len(example.records),
                         "gold_index": gold, "value": example.value})
            prompts.append(kv_row_prompt(example, gold))
    return _rows(reader, jobs, prompts, lambda job, text: kv_accuracy(text, job["value"]))


def accuracy_by_position(runs: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Mean accuracy per reader × setting × gold position with a percentile bootstrap 95% CI over
    questions (``position`` is 1-based, as the paper plots it)."""
    keys = ["model", "setting", "gold_index"] if "model" in runs else ["setting", "gold_index"]
    rows = []
    for key, group in runs.groupby(keys, sort=False):
        named = dict(zip(keys, key))
        values = group["correct"].to_numpy(dtype=float)
        low, high = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        rows.append({**named, "position": named["gold_index"] + 1, "accuracy": values.mean(),
                     "ci_low": low, "ci_high": high,
                     "n": len(values), "mean_prompt_tokens": group["prompt_tokens"].mean()})
    return pd.DataFrame(rows)


def middle_index(n_docs: int, golds: Sequence[int]) -> int:
    """The tested gold index nearest the centre of ``n_docs`` positions (the lower one on a tie):
    position 5 of 10, position 10 of 20 — where the paper's curves bottom out."""
    centre = (n_docs - 1) / 2
    return min(sorted(golds), key=lambda gold: abs(gold - centre))


def positional_curves(runs: pd.DataFrame):
    """``(model, setting, rows, golds, middle)`` for every reader × setting with at least three
    gold positions: its rows, the sorted 0-based gold indices, and the middle one (``middle_index``)."""
    positional = runs[runs["gold_index"] >= 0]
    for (model, setting), group in positional.groupby(["model", "setting"], sort=False):
        golds = sorted(group["gold_index"].unique())
        if len(golds) >= 3:
            yield model, setting, group, golds, middle_index(int(group["n_docs"].iloc[0]), golds)


CONTRAST_COLUMNS = ["model", "setting", "contrast", "position", "middle_position", "n", "accuracy", "middle_accuracy",
                    "delta", "ci_low", "ci_high", "wins", "ties", "losses", "p_randomization"]


def position_contrasts(runs: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """The U tested: per reader × setting with at least three gold positions, paired differences
    first − middle and last − middle over the questions answered at every position (bootstrap 95%
    CI, unadjusted paired randomization p). The Holm-corrected p and the verdict of each contrast
    are the study's verdict table's (``claims`` → ``verdict_table``), the one family every claim
    is corrected in; :func:`curve_shape` reads the shape from it."""
    rows = []
    for model, setting, group, golds, middle in positional_curves(runs):
        table = group.pivot_table(index="qid", columns="gold_index", values="correct", aggfunc="first").dropna()
        per_query = table.stack().rename("value").reset_index().rename(columns={"gold_index": "system"})
        per_query = per_query.assign(measure="accuracy", system=per_query["system"].astype(int))
        pairs = [(golds[0], middle), (golds[-1], middle)]
        tested = paired_comparison(per_query, pairs, "accuracy", n_resamples=n_resamples, seed=seed)
        for contrast, row in zip(("first − middle", "last − middle"), tested.itertuples()):
            rows.append({"model": model, "setting": setting, "contrast": contrast, "position": row.system + 1,
                         "middle_position": middle + 1, "n": len(table), "accuracy": row.mean,
                         "middle_accuracy": row.baseline_mean, "delta": row.delta, "ci_low": row.ci_low,
                         "ci_high": row.ci_high, "wins": row.wins, "ties": row.ties, "losses": row.losses,
                         "p_randomization": row.p_randomization})
    return pd.DataFrame(rows, columns=CONTRAST_COLUMNS)


def curve_shape(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per reader × setting, the curve's shape read from the study's verdict table (``claims``
    tested by ``verdict_table``: one Holm family, so a shape never disagrees with a verdict):
    ``U`` when "first beats the middle" and "last beats the middle" are both reproduced,
    ``primacy`` / ``recency`` when one is, ``inverted`` when one is significantly reversed, else
    ``inconclusive``; ``untestable`` when both contrasts are (floor, ceiling or truncated), and a
    suffix naming the one that is when only one is."""
    rows = []
    if not {"model", "setting"} <= set(verdicts.columns):  # no claim was testable
        return pd.DataFrame(rows, columns=["model", "setting", "shape", "n", "first", "last"])
    for (model, setting), group in verdicts.groupby(["model", "setting"], sort=False):
        by_end = group.assign(position=group["system"].astype(int)).sort_values("position")
        first, last = by_end["verdict"].iloc[0], by_end["verdict"].iloc[-1]
        ends = {first, last}
        untestable = [end for end, v in (("first", first), ("last", last)) if v.startswith("untestable")]
        shape = ("untestable" if len(untestable) == 2 else
                 "U" if first == last == REPRODUCED else "primacy" if first == REPRODUCED else
                 "recency" if last == REPRODUCED else "inverted" if NOT_REPRODUCED in ends else "inconclusive")
        if len(untestable) == 1:
            shape += f" ({untestable[0]} untestable)"
        rows.append({"model": model, "setting": setting, "shape": shape, "n": int(by_end["n"].min()),
                     "first": first, "last": last})
    return pd.DataFrame(rows, columns=["model", "setting", "shape", "n", "first", "last"])


def paper_contrasts() -> pd.DataFrame:
    """The paper's first − middle and last − middle differences (GPT-3.5-Turbo), per setting."""
    rows = []
    for setting, group in PAPER_QA.groupby("setting", sort=False):
        by_position = group.set_index("position")["accuracy"]
        positions_tested = sorted(by_position.index)
        n_docs = int(setting.split()[0])
        middle = middle_index(n_docs, [p - 1 for p in positions_tested]) + 1
        for contrast, position in (("first − middle", positions_tested[0]), ("last − middle", positions_tested[-1])):
            rows.append({"setting": setting, "contrast": contrast, "paper": by_position[position] - by_position[middle]})
    return pd.DataFrame(rows)


def paper_kv_contrasts() -> dict[str, float]:
    """MPT-30B's first − middle and last − middle on 140-key retrieval (the repository's numbers)."""
    accuracy = PAPER_KV_140.set_index("position")["accuracy"]
    return {"first − middle": accuracy[1] - accuracy[70], "last − middle": accuracy[140] - accuracy[70]}


def claims(runs: pd.DataFrame, deviation: str = "") -> list[Claim]:
    """Per reader × setting with at least three gold positions: the gold document first, and last,
    beats it in the middle (compared on column ``position``, 1-based). Paper effects: GPT-3.5-Turbo
    on the QA settings it ran, MPT-30B's 140-key curve for key–value settings."""
    paper = paper_contrasts().set_index(["setting", "contrast"])["paper"]
    out = []
    for model, setting, _, golds, middle_gold in positional_curves(runs):
        middle = middle_gold + 1
        keys = setting.endswith("keys")
        for end, position in (("first", golds[0] + 1), ("last", golds[-1] + 1)):
            contrast = f"{end} − middle"
            effect = paper_kv_contrasts()[contrast] if keys else paper.get((setting, contrast))
            source = "MPT-30B, 140 keys" if keys else PAPER_READER
            out.append(Claim(f"gold {end} beats gold in the middle ({setting})",
                             f"{source}: {effect:+.3f}" if effect is not None else f"{source}: not run",
                             int(position), int(middle), None, +1, None if effect is None else float(effect),
                             {"model": model, "setting": setting},
                             "; ".join(x for x in (model.split("/")[-1] + f" (paper: {source})", deviation) if x)))
    return out


def with_position(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with the 1-based ``position`` column the claims compare on."""
    return runs.assign(position=runs["gold_index"] + 1)


def report(summary: pd.DataFrame, kv_summary: pd.DataFrame, note: str,
           contrasts: pd.DataFrame | None = None, verdicts: pd.DataFrame | None = None) -> Report:
    """Accuracy by the gold document's position beside the paper's (with 95% intervals), the
    closed-book and oracle baselines, our key–value curve (``accuracy_by_position`` tables), and
    the paired first/last − middle tests (``position_contrasts``) beside the paper's differences."""
    rows = []
    paper = PAPER_QA.set_index(["setting", "position"])["accuracy"]
    for r in summary.itertuples():
        if r.setting in PAPER_BASELINES:
            paper_value = PAPER_BASELINES[r.setting]
            claim = f"{r.setting} baseline"
        else:
            paper_value = paper.get((r.setting, r.position))
            claim = "accuracy is highest with the gold document first or last, lowest in the middle (U-curve)"
        rows.append({"claim": claim, "setting": r.setting, "position": r.position,
                     "paper": paper_value, "ours": r.accuracy, "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n})
    if contrasts is not None and not contrasts.empty:
        paper_delta = paper_contrasts().set_index(["setting", "contrast"])["paper"]
        family = {} if verdicts is None or verdicts.empty else {
            (v["model"], v["setting"], str(v["system"])): (v["p_holm"], v["verdict"]) for _, v in verdicts.iterrows()}
        for r in contrasts.itertuples():
            p_holm, tested = family.get((r.model, r.setting, str(r.position)), (None, ""))
            rows.append({"claim": f"{r.contrast.split()[0]} position beats the middle (paired; Holm over the "
                                  "study's claims)",
                         "setting": r.setting, "position": f"{r.position} vs {r.middle_position}",
                         "paper": paper_delta.get((r.setting, r.contrast)), "ours": r.delta,
                         "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n, "p_holm": p_holm, "verdict": tested})
    for r in kv_summary.itertuples():
        rows.append({"claim": "key–value retrieval by the key's position (paper: 140 keys, MPT-30B)",
                     "setting": r.setting, "position": r.position, "paper": None, "ours": r.accuracy,
                     "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n})
    return Report(f"Lost in the Middle (paper reader: {PAPER_READER})", pd.DataFrame(rows), note, verdicts=verdicts)


def qa_examples(n_questions: int, n_docs: int, seed: int = 0, retriever: str = "bm25", official: bool = False,
                load: Callable[[str], Dataset] = load_dataset) -> tuple[list[MultiDocExample], str]:
    """The study's QA examples and where they come from: the paper's own ``n_docs``-document files
    (``official``), else ``n_questions`` NQ-open oracle questions drawn by ``seed`` with ``n_docs − 1``
    distractors retrieved by ``retriever`` from the other questions' gold passages."""
    if official:
        return load_official_multidoc(n_docs, 0)[:n_questions], "the paper's files"
    pool = load("nq_open_oracle")
    question_ids = sorted(pool.queries, key=lambda q: int(q.split("-")[1]))
    random.Random(seed).shuffle(question_ids)
    examples = build_multidoc_examples(pool, n_distractors=n_docs - 1, retriever=retriever,
                                       question_ids=question_ids[:n_questions])
    return examples, (f"built from nq-open-oracle: distractors by {examples[0].info['distractor_retriever']} over "
                      f"{examples[0].info['pool_size']} gold passages of other questions")


def kv_examples(n_keys: int, n_records: int, n_examples: int) -> list[KVExample]:
    """The first ``n_examples`` key–value examples of the paper's ``n_keys``-key file, each cut to
    ``n_records`` records."""
    return [example.shortened(n_records) for example in load_kv_examples(n_keys)[:n_examples]]


def _profiled(parameters: Mapping[str, Any], name: str) -> Any:
    """A notebook parameter as the recorded profile ran it (``QUICK_<name>`` in the quick profile)."""
    quick = parameters.get("profile") == "quick" and f"QUICK_{name}" in parameters
    return parameters[f"QUICK_{name}" if quick else name]


def stored_reader_rows(folder: Path, load: Callable[[str], Dataset]) -> ReaderRows:
    """Every stored QA and key–value row of a run (``results/lost_in_the_middle/<profile>/``) with
    its prompt rebuilt from the raw data by the code above, for ``grainlab verify``."""
    parameters = json.loads((folder / "manifest.json").read_text("utf-8"))["parameters"]
    settings = {int(n): golds for n, golds in _profiled(parameters, "SETTINGS").items()}
    examples, _ = qa_examples(_profiled(parameters, "QUESTIONS"), max(settings), int(parameters["SEED"]),
                              parameters["DISTRACTOR_RETRIEVER"], bool(parameters["USE_OFFICIAL_FILES"]), load)
    by_qid = {example.qid: example for example in examples}
    name = f"{folder.parent.name}/{folder.name}"
    read = {"keep_default_na": False, "dtype": {"prediction": str, "answers": str, "value": str, "qid": str}}
    rows = []
    for r in pd.read_csv(folder / "qa_runs.csv", **read).itertuples():
        setting = r.setting if r.n_docs < 2 else f"{r.setting}, gold {r.gold_index + 1}"
        rows.append(ReaderRow(name, setting, r.qid, r.model, int(r.max_new_tokens),
                              qa_row_prompt(by_qid[r.qid], int(r.n_docs), int(r.gold_index)), r.prediction,
                              float(r.correct), "best_subspan_em", partial(qa_score, answers=r.answers), first_line,
                              int(r.prompt_tokens)))
    kv_path = folder / "kv_runs.csv"
    if kv_path.exists():
        kv = pd.read_csv(kv_path, **read)
        numbers = kv["qid"].str.removeprefix("kv-").astype(int)
        records = kv_examples(int(parameters["KV_KEYS"]), int(kv["n_docs"].iloc[0]), int(numbers.max()) + 1)
        for r, number in zip(kv.itertuples(), numbers):
            rows.append(ReaderRow(name, f"{r.setting}, key {r.gold_index + 1}", r.qid, r.model, int(r.max_new_tokens),
                                  kv_row_prompt(records[number], int(r.gold_index)), r.prediction, float(r.correct),
                                  "kv_accuracy", partial(kv_accuracy, value=r.value), first_line, int(r.prompt_tokens)))
    backend, batch = parameters.get("BACKEND", "auto"), int(parameters.get("BATCH_SIZE", 4))
    return ReaderRows(rows, lambda model, limit: get_reader(model, backend, max_new_tokens=limit, batch_size=batch))


def qa_tables(qa_runs: pd.DataFrame, model: str, others: Sequence[str], n_resamples: int = 10_000,
              seed: int = 0) -> dict[str, pd.DataFrame]:
    """The QA tables derived from the QA runs, by file name: accuracy by position per reader, the
    main ``model``'s first/last − middle contrasts, each of ``others`` against ``model`` position
    by position, and what each reader does with the context (empty answers, lengths, time)."""
    behaviour = (qa_runs.assign(empty=qa_runs["prediction"].fillna("").str.strip() == "")
                 .groupby(["model", "setting"], sort=False)
                 .agg(accuracy=("correct", "mean"), empty_share=("empty", "mean"),
                      prompt_tokens=("prompt_tokens", "mean"), new_tokens=("new_tokens", "mean"),
                      seconds=("seconds", "mean")).reset_index())
    return {"qa_accuracy_by_position.csv": accuracy_by_position(qa_runs, n_resamples=n_resamples, seed=seed),
            "qa_position_contrasts.csv": position_contrasts(qa_runs, n_resamples=n_resamples, seed=seed),
            "qa_reader_tests.csv": paired_between(qa_runs, "model", [(m, model) for m in others], "correct",
                                                  ["setting", "gold_index"], n_resamples=n_resamples, seed=seed),
            "qa_behaviour.csv": behaviour}


def kv_tables(kv_runs: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The key–value tables derived from the key–value runs, by file name."""
    return {"kv_accuracy_by_position.csv": accuracy_by_position(kv_runs, n_resamples=n_resamples, seed=seed),
            "kv_position_contrasts.csv": position_contrasts(kv_runs, n_resamples=n_resamples, seed=seed)}


def claim_tables(qa_runs: pd.DataFrame, kv_runs: pd.DataFrame, n_resamples: int = 10_000,
                 seed: int = 0) -> dict[str, pd.DataFrame]:
    """The tables the claims are read from, by file name: generations at their token limit, the
    verdicts (every reader × setting's first and last against the middle, one Holm family) and the
    curve's shape read from them."""
    runs = pd.concat([qa_runs, kv_runs], ignore_index=True)
    positioned = with_position(runs)
    verdicts = verdict_table(positioned, claims(positioned), system_col="position", value_col="correct",
                             n_resamples=n_resamples, seed=seed)
    return {"token_limits.csv": token_limit_table(runs), "verdicts.csv": verdicts,
            "curve_shape.csv": curve_shape(verdicts)}


def derived_tables(folder: Path, load: Callable[[str], Dataset] | None = None) -> dict[str, pd.DataFrame]:
    """Every table a run (``results/lost_in_the_middle/<profile>/``) derives from its stored runs,
    rebuilt by the functions above with the parameters its manifest records (the main job compares
    them with the committed files)."""
    parameters = json.loads((folder / "manifest.json").read_text("utf-8"))["parameters"]
    n, seed = int(parameters["N_RESAMPLES"]), int(parameters["SEED"])
    qa_runs = pd.read_csv(folder / "qa_runs.csv")
    kv_runs = pd.read_csv(folder / "kv_runs.csv")
    others = list(_profiled(parameters, "COMPARE_READERS"))
    return {**qa_tables(qa_runs, parameters["MODEL"], others, n, seed), **kv_tables(kv_runs, n, seed),
            **claim_tables(qa_runs, kv_runs, n, seed)}
