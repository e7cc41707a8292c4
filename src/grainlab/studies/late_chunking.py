"""Late chunking (Günther et al. 2024; notebook 03): the same chunks embedded on their own
(naive) or pooled from one pass over the whole document (late)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from grainlab.experiments import System
from grainlab.studies.claims import Claim
from grainlab.studies.report import Report

# Günther et al. 2024, Table 2: SciFact nDCG@10 ×100 with jina-embeddings-v2-small-en.
PAPER_SCIFACT = {"no chunking": 63.89, "naive": 64.20, "late": 66.10}
PAPER_MODEL = "jina-embeddings-v2-small-en (8,192 tokens)"
PAPER_BOUNDARY = "fixed 256 tokens"
# Table 2, averaged over 3 models × 4 datasets (the per-model cells could not be verified):
PAPER_RELATIVE_GAIN = "Table 2 averages: fixed 256 tokens 52.2 → 54.0, 5 sentences 52.4 → 54.3, semantic 52.4 → 53.8"


# Paired effects the paper implies (nDCG@10, late − naive): its SciFact row, then Table 2's averages.
PAPER_EFFECT = {"fixed 256 tokens": (66.10 - 64.20) / 100, "5 sentences": (54.3 - 52.4) / 100,
                "semantic breakpoints": (53.8 - 52.4) / 100}


def paper_points() -> list[tuple[str, float, float]]:
    """The paper's SciFact arms at 256 tokens as ``(label, size, nDCG@10)`` reference points."""
    return [(f"paper {arm} · 256 (jina-v2-small)", 256, PAPER_SCIFACT[arm] / 100) for arm in ("naive", "late")]


def paper_sweep_difference() -> list[tuple[str, int, float]]:
    """The paper's SciFact late − naive at 256 tokens as a ``(label, size, difference)`` reference."""
    return [("paper late − naive · 256 (jina-v2-small)", 256, (PAPER_SCIFACT["late"] - PAPER_SCIFACT["naive"]) / 100)]


def claims(strategies: Sequence[str], sizes: Sequence[int], long_sets: Sequence[str], long_measure: str,
           model_note: str, sample_note: str = "") -> list[Claim]:
    """Late beats naive on the same chunks — per boundary strategy on SciFact (``part`` scifact),
    per swept size (``part`` sweep) and per long-document set (``part`` = the set); plus naive
    chunking over whole documents (the paper's 64.20 vs 63.89). ``model_note`` / ``sample_note``
    state the deviations (our encoder; a SciFact sample)."""
    deviation = "; ".join(n for n in (model_note, sample_note) if n)
    out = [Claim("naive chunking beats no chunking (SciFact nDCG@10)", "64.20 vs 63.89 (jina-v2-small)",
                 f"naive · {PAPER_BOUNDARY}", "no chunking", "nDCG@10", +1, (64.20 - 63.89) / 100,
                 {"part": "scifact"}, deviation)]
    for name in strategies:
        paper = ("66.10 vs 64.20 on SciFact" if name == PAPER_BOUNDARY else PAPER_RELATIVE_GAIN)
        out.append(Claim(f"late beats naive chunking · {name} (SciFact nDCG@10)", paper, f"late · {name}",
                         f"naive · {name}", "nDCG@10", +1, PAPER_EFFECT.get(name), {"part": "scifact"}, deviation))
    for size in sizes:
        out.append(Claim(f"late beats naive chunking at {size} tokens (SciFact nDCG@10)",
                         "gains largest for small chunks (no per-size numbers)", f"late · {size}", f"naive · {size}",
                         "nDCG@10", +1, None, {"part": "sweep"}, deviation))
    for name in long_sets:
        out.append(Claim(f"late beats naive chunking on long documents · {name}",
                         "long late chunking (macro windows) keeps the gain", "late", "naive", long_measure, +1,
                         None, {"part": name}, f"{model_note}; answer-string recall, not the paper's nDCG"))
    return out


def dense(model: str, max_length: int) -> str:
    return f"dense(model={model},max_length={max_length})"


def late(model: str, max_length: int, overlap: int) -> str:
    return f"late(model={model},overlap={overlap},max_length={max_length})"


def boundary_systems(dense_spec: str, late_spec: str, strategies: Mapping[str, str]) -> list[System]:
    """Whole documents, then naive and late for each boundary strategy (tags ``method``, ``boundary``)."""
    out = [System(dense_spec, "none", "max", label="no chunking", tags={"method": "no chunking", "boundary": "none"})]
    for name, spec in strategies.items():
        out += [System(spec_, spec, "max", label=f"{method} · {name}", tags={"method": method, "boundary": name})
                for method, spec_ in (("naive", dense_spec), ("late", late_spec))]
    return out


def sweep_systems(dense_spec: str, late_spec: str, sizes: Sequence[int], tokenizer: str) -> list[System]:
    """Naive and late at each fixed chunk size (tags ``method``, ``size``)."""
    return [System(spec_, f"fixed_tokens(size={size},overlap=0,tokenizer={tokenizer})", "max",
                   label=f"{method} · {size}", tags={"method": method, "size": size})
            for size in sizes for method, spec_ in (("naive", dense_spec), ("late", late_spec))]


def long_systems(dense_spec: str, late_spec: str, chunker: str) -> list[System]:
    """Naive and late over the units of long documents (answer recall over chunks)."""
    return [System(spec_, chunker, None, label=method, tags={"method": method})
            for method, spec_ in (("naive", dense_spec), ("late", late_spec))]


def grid_systems(model: str, sizes: Sequence[int], windows: Sequence[int], overlap: int,
                 naive_length: int, level: str) -> list[System]:
    """The long-document grid: at every chunk size, naive and late with each macro window (tags
    ``method``, ``size``, ``window`` — 0 for naive, which has none — and ``level``). ``level``
    ``chunks`` ranks the chunks (answer recall); ``documents`` ranks documents by their best chunk
    (nDCG@10, the paper's long-document measure)."""
    if level not in ("chunks", "documents"):
        raise ValueError(f"level must be 'chunks' or 'documents', got {level!r}")
    aggregate = "max" if level == "documents" else None
    chunkers = {size: f"fixed_tokens(size={size},overlap=0,tokenizer={model})" for size in sizes}
    naive = [System(dense(model, naive_length), chunkers[size], aggregate, label=f"naive · {size} · {level}",
                    tags={"method": "naive", "size": size, "window": 0, "level": level}) for size in sizes]
    # late arms grouped by window: the sizes of one window re-pool one pass over the documents
    # (retrieval.late keeps the last pass's token states), so the corpus is read once per window
    late_arms = [System(late(model, window, min(overlap, window // 2)), chunkers[size], aggregate,
                        label=f"late · {size} · w{window} · {level}",
                        tags={"method": "late", "size": size, "window": window, "level": level})
                 for window in windows for size in sizes]
    return naive + late_arms


def framing_systems(model: str, size: int, windows: Sequence[int], overlap: int, naive_length: int,
                    level: str) -> list[System]:
    """The window-framing ablation at one chunk size: naive, then late with each macro window
    ``sliced`` (every window after the first starts mid-text, as the official code) and
    ``framed`` (every window gets [CLS], the passage prefix and [SEP]); tags ``method``,
    ``framing``, ``size``, ``window``, ``level``."""
    aggregate = "max" if level == "documents" else None
    chunker = f"fixed_tokens(size={size},overlap=0,tokenizer={model})"
    out = [System(dense(model, naive_length), chunker, aggregate, label=f"naive · {size} · {level}",
                  tags={"method": "naive", "framing": "none", "size": size, "window": 0, "level": level})]
    for window in windows:
        for framing in ("sliced", "framed"):
            spec = late(model, window, min(overlap, window // 2))
            spec = spec[:-1] + ",framing=framed)" if framing == "framed" else spec
            out.append(System(spec, chunker, aggregate, label=f"late · {size} · w{window} · {framing} · {level}",
                              tags={"method": "late", "framing": framing, "size": size, "window": window,
                                    "level": level}))
    return out


def answer_windows(dataset, tokenizer, window: int, overlap: int, prefix_tokens: int = 0) -> dict[str, int]:
    """Question id → the index of the macro window its first gold answer starts in (0: the first)."""
    return {qid: window_position(token, window, overlap)[0]
            for qid, token in answer_tokens(dataset, tokenizer, prefix_tokens).items()}


def gap_by_window(per_query: pd.DataFrame, windows_of: Mapping[int, Mapping[str, int]], measure: str,
                  clusters: Mapping[str, str] | None = None, n_resamples: int = 2_000, seed: int = 0) -> pd.DataFrame:
    """late − naive per question, per macro window and framing, over the questions whose answer
    starts in the document's first window and over those in a later one: n, the mean difference
    and its cluster bootstrap 95% interval (``clusters``: question → gold document)."""
    from grainlab.evaluation.significance import cluster_bootstrap_ci

    rows = per_query[per_query["measure"] == measure]
    naive = rows[rows["method"] == "naive"].set_index("qid")["value"]
    out = []
    for (window, framing), late_rows in rows[rows["method"] == "late"].groupby(["window", "framing"], sort=False):
        where = windows_of[int(window)]
        frame = late_rows.assign(index=late_rows["qid"].map(where)).dropna(subset=["index"])
        frame = frame.assign(diff=frame["value"].to_numpy() - naive.loc[frame["qid"]].to_numpy(),
                             part=(frame["index"] > 0).map({False: "first window", True: "later windows"}))
        for part in ("first window", "later windows"):
            group = frame[frame["part"] == part]
            if group.empty:
                continue
            labels = pd.Series([(clusters or {}).get(q, q) for q in group["qid"]]).to_numpy()
            low, high = cluster_bootstrap_ci(group["diff"].to_numpy(float), labels, n_resamples=n_resamples, seed=seed)
            out.append({"window": int(window), "framing": framing, "answer in": part, "n": len(group),
                        "documents": len(set(labels)), "late − naive": float(group["diff"].mean()),
                        "ci_low": low, "ci_high": high})
    return pd.DataFrame(out)


def chunk_similarity(vectors: Mapping[str, object], units: Sequence, token_of: Mapping[str, int], window: int,
                     overlap: int, bins: int = 4) -> pd.DataFrame:
    """How alike the chunk vectors inside one macro window are: for every chunk, its mean cosine
    similarity to the other chunks of its document's same window, by the quarter of the window it
    starts in (``token_of``: chunk id → its first token in the document). One row per window index
    kind (first / later) × quarter: chunks and the mean similarity."""
    import numpy as np

    groups: dict[tuple[str, int], list] = {}
    for unit in units:
        index, position = window_position(token_of[unit.chunk_id], window, overlap)
        groups.setdefault((unit.doc_id, index), []).append((unit.chunk_id, position))
    rows = []
    for (_, index), members in groups.items():
        if len(members) < 2:
            continue
        matrix = np.stack([np.asarray(vectors[c], dtype=np.float64) for c, _ in members])
        matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
        similar = matrix @ matrix.T
        mean_other = (similar.sum(axis=1) - 1.0) / (len(members) - 1)
        for (_, position), value in zip(members, mean_other):
            rows.append({"windows": "first window" if index == 0 else "later windows",
                         "quarter": min(position * bins // window, bins - 1), "similarity": float(value)})
    table = pd.DataFrame(rows)
    return (table.groupby(["windows", "quarter"]).agg(chunks=("similarity", "size"), similarity=("similarity", "mean"))
            .reset_index())


def framing_similarity(dataset, systems: Sequence[System], tokenizer, prefix_tokens: int, overlap: int,
                       cache=None) -> pd.DataFrame:
    """:func:`chunk_similarity` for every arm of :func:`framing_systems` (the naive arm read with
    each late arm's windows), from the chunk vectors the experiment stored in the artifact cache
    (nothing is encoded again when it ran first)."""
    from grainlab.chunking import get_chunker
    from grainlab.experiments.chunk_cache import chunk_corpus
    from grainlab.retrieval import get_retriever

    units = chunk_corpus(dataset, get_chunker(systems[0].chunker), cache)
    starts = {doc_id: tokenizer.token_starts(doc.text) for doc_id, doc in dataset.corpus.items()}
    token_of = {u.chunk_id: token_at(starts[u.doc_id], u.start, prefix_tokens) for u in units}
    vectors = {}
    for system in systems:
        retriever = get_retriever(system.retriever, cache).index(units, dataset.corpus)
        vectors[system.display] = dict(zip((u.chunk_id for u in units), retriever.embeddings))
    naive = next(s for s in systems if dict(s.tags)["method"] == "naive")
    frames = []
    for system in systems:
        tags = dict(system.tags)
        if tags["method"] != "late":
            continue
        window = int(tags["window"])
        for arm in (system, naive):
            table = chunk_similarity(vectors[arm.display], units, token_of, window, min(overlap, window // 2))
            arm_tags = dict(arm.tags)
            frames.append(table.assign(window=window, method=arm_tags["method"],
                                       framing=tags["framing"] if arm is system else "none"))
    return pd.concat(frames, ignore_index=True).drop_duplicates(["window", "method", "framing", "windows", "quarter"])


def _interval(row) -> str:
    return f"{row['late − naive']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"


def framing_findings(gaps: pd.DataFrame, similarity: pd.DataFrame) -> list[str]:
    """What the framing ablation found, one sentence per set × window, written from its tables:
    late − naive in the first and in later windows for each framing, and how alike the chunk
    vectors of a later window are, late against naive."""
    lines = []
    for (part, window), rows in gaps.groupby(["part", "window"], sort=False):
        cells = {(r["framing"], r["answer in"]): r for _, r in rows.iterrows()}
        said = [f"{framing}: first window {_interval(cells[(framing, 'first window')])}"
                + (f", later windows {_interval(cells[(framing, 'later windows')])} (n={cells[(framing, 'later windows')]['n']})"
                   if (framing, "later windows") in cells else "")
                for framing in ("sliced", "framed") if (framing, "first window") in cells]
        alike = similarity[(similarity["part"] == part) & (similarity["window"] == window)
                           & (similarity["windows"] == "later windows")]
        means = alike.groupby(["method", "framing"])["similarity"].mean()
        similar = "; ".join(f"{m if f == 'none' else f} {v:.3f}" for (m, f), v in means.items())
        lines.append(f"{part}, window {window}: late − naive answer recall, {'; '.join(said)}."
                     + (f" Mean cosine between chunk vectors of a later window: {similar}." if similar else ""))
    return lines


def grid_effects(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The long grid's tested late − naive contrasts from a verdict table (rows whose system is a
    grid arm, ``late · <size> · w<window> · <level>``), one row each: ``part, level, size, window,
    effect, ci_low, ci_high, verdict`` — what the grid figure draws."""
    arms = verdicts["system"].str.extract(r"^late · (?P<size>\d+) · w(?P<window>\d+) · (?P<level>\w+)$")
    rows = pd.concat([verdicts, arms], axis=1).dropna(subset=["size"])
    return rows.assign(size=rows["size"].astype(int), window=rows["window"].astype(int))[
        ["part", "level", "size", "window", "measure", "effect", "ci_low", "ci_high", "verdict"]].reset_index(drop=True)


def grid_claims(sets: Sequence[str], sizes: Sequence[int], windows: Sequence[int], measure: str, level: str,
                model_note: str) -> list[Claim]:
    """Late beats naive on the same chunks of long documents, per set × chunk size × macro window
    (``where``: ``part`` = the set, ``size``, ``window`` of the late arm; naive arms have window 0,
    so each claim reads its naive arm by label)."""
    paper = ("long late chunking keeps the gain on long documents (document nDCG@10)" if level == "documents"
             else "— (the paper scores documents, not chunks)")
    return [Claim(f"late beats naive on long documents · {name} · {size} tokens · window {window} ({level})",
                  paper, f"late · {size} · w{window} · {level}", f"naive · {size} · {level}", measure, +1, None,
                  {"part": name}, model_note)
            for name in sets for size in sizes for window in windows]


def window_position(token: int, window: int, overlap: int) -> tuple[int, int]:
    """``(window index, position inside it)`` of a document token under macro windows of ``window``
    tokens sharing ``overlap`` (``retrieval.late``: every window after the first keeps only what
    follows its first ``overlap`` tokens, so a token belongs to the last window whose kept part holds it)."""
    stride = window - overlap
    if token < window:
        return 0, token
    index = (token - overlap) // stride
    return index, token - index * stride


def token_at(starts: Sequence[int], char: int, prefix_tokens: int = 0) -> int:
    """The document token (counted from the window's start, ``prefix_tokens`` included) that holds
    character ``char``, given each token's first character ``starts``."""
    import bisect

    return max(bisect.bisect_right(starts, char) - 1, 0) + prefix_tokens


def answer_tokens(dataset, tokenizer, prefix_tokens: int = 0) -> dict[str, int]:
    """Question id → the token where its first gold answer starts (:func:`token_at`)."""
    from grainlab.experiments.scoring import answer_spans

    starts_of: dict[str, list[int]] = {}
    out = {}
    for qid, spans in answer_spans(dataset).items():
        if not spans:
            continue
        doc_id, start, _ = min(spans, key=lambda s: (s[0], s[1]))
        if doc_id not in starts_of:
            starts_of[doc_id] = tokenizer.token_starts(dataset.corpus[doc_id].text)
        out[qid] = token_at(starts_of[doc_id], start, prefix_tokens)
    return out


def answer_window_positions(dataset, tokenizer, window: int, overlap: int, prefix_tokens: int = 0) -> dict[str, int]:
    """Question id → the position, inside its macro window, of the token where its first gold
    answer starts (``prefix_tokens`` — the encoder's prefix and start token — are counted in)."""
    return {qid: window_position(token, window, overlap)[1]
            for qid, token in answer_tokens(dataset, tokenizer, prefix_tokens).items()}


def passage_prefix_tokens(model: str, tokenizer) -> int:
    """Tokens before a document's first token in its first window: the start token and the
    encoder's passage prefix (nomic's ``search_document: ``)."""
    from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id

    preset = GGUF_EMBEDDERS.get(gguf_model_id(model))
    return 1 + (tokenizer.count(preset.passage_prefix) if preset else 0)


def gap_by_position(per_query: pd.DataFrame, positions: Mapping[tuple[str, int], Mapping[str, int]], measure: str,
                    bins: int = 4, clusters: Mapping[str, Mapping[str, str]] | None = None,
                    n_resamples: int = 2_000, seed: int = 0) -> pd.DataFrame:
    """late − naive per question (same set and chunk size), by the quarter of the late arm's window
    its answer starts in: ``positions`` maps ``(set, window)`` → question → position. One row per
    set × size × window × bin: n, the mean difference and its cluster bootstrap 95% interval."""
    from grainlab.evaluation.significance import cluster_bootstrap_ci

    rows = per_query[(per_query["measure"] == measure)]
    naive = rows[rows["method"] == "naive"].set_index(["part", "size", "qid"])["value"]
    out = []
    for (part, size, window), late_rows in rows[rows["method"] == "late"].groupby(["part", "size", "window"]):
        where = positions[(part, int(window))]
        frame = late_rows.assign(position=late_rows["qid"].map(where)).dropna(subset=["position"])
        frame = frame.assign(diff=frame["value"].to_numpy() - naive.loc[[(part, size, q) for q in frame["qid"]]].to_numpy(),
                             bin=(frame["position"] * bins // int(window)).astype(int).clip(0, bins - 1))
        for b, group in frame.groupby("bin"):
            labels = [(clusters or {}).get(part, {}).get(q, q) for q in group["qid"]]
            low, high = cluster_bootstrap_ci(group["diff"].to_numpy(float), pd.Series(labels).to_numpy(),
                                             n_resamples=n_resamples, seed=seed)
            width = int(window) // bins
            out.append({"part": part, "size": int(size), "window": int(window), "bin": int(b),
                        "positions": f"{b * width}–{(b + 1) * width - 1}", "n": len(group),
                        "late − naive": float(group["diff"].mean()), "ci_low": low, "ci_high": high})
    return pd.DataFrame(out)


def report(scores: pd.Series, late_vs_naive: pd.DataFrame, note: str, sweep_tests: pd.DataFrame | None = None,
           long_tests: pd.DataFrame | None = None, verdicts: pd.DataFrame | None = None) -> Report:
    """SciFact nDCG@10 ×100 for the paper's three arms (fixed 256-token chunks), with the paired
    test of late against naive on the same chunks; then, when given, late − naive at every swept
    chunk size (the paper: gains are largest for small chunks) and on each long-document set
    (``paired_comparison`` rows, the long ones with ``dataset``). Their p-values are unadjusted: the
    one Holm correction of each claim is the verdict table's (one family per study)."""
    test = late_vs_naive.set_index("system")
    rows = []
    for arm, label in (("no chunking", "no chunking"), ("naive", f"naive · {PAPER_BOUNDARY}"),
                       ("late", f"late · {PAPER_BOUNDARY}")):
        row = {"claim": "late > naive > no chunking (SciFact nDCG@10 ×100)", "arm": label,
               "paper": PAPER_SCIFACT[arm], "ours": round(100 * float(scores[label]), 2)}
        if label in test.index:
            row.update({"delta vs naive": round(100 * float(test.loc[label, "delta"]), 2),
                        "p (randomization, unadjusted)": float(test.loc[label, "p_randomization"])})
        rows.append(row)
    for r in (sweep_tests.itertuples() if sweep_tests is not None else []):
        rows.append({"claim": "late chunking helps most with small chunks (late − naive, nDCG@10 ×100)",
                     "arm": r.system, "paper": PAPER_RELATIVE_GAIN, "ours": round(100 * r.mean, 2),
                     "delta vs naive": round(100 * r.delta, 2), "p (randomization, unadjusted)": r.p_randomization})
    for r in (long_tests.itertuples() if long_tests is not None else []):
        rows.append({"claim": "long late chunking on documents longer than the window (AnswerRecall, late − naive)",
                     "arm": f"late · {r.dataset}", "paper": "", "ours": round(100 * r.mean, 2),
                     "delta vs naive": round(100 * r.delta, 2), "p (randomization, unadjusted)": r.p_randomization})
    return Report("Late chunking (SciFact nDCG@10 ×100)", pd.DataFrame(rows), note, verdicts=verdicts)


ALPHA = 0.05


def finding(delta: float, p_holm: float | None) -> str:
    """One word for a late − naive test: which side wins at ``ALPHA`` after Holm, else neither."""
    if p_holm is None or pd.isna(p_holm):
        return "not tested"
    if p_holm >= ALPHA:
        return "no significant difference"
    return "late better" if delta > 0 else "late worse"


def _previous_rows(previous: Path) -> list[dict]:
    """late − naive as the earlier (MiniLM) run recorded it: the boundary strategies and the long
    sets with their tests; the swept sizes from their means, tested only where that run did."""
    rows = []
    for r in pd.read_csv(previous / "late_vs_naive.csv").itertuples():
        rows.append({"part": "scifact", "arm": r.system.removeprefix("late · "), "measure": r.measure,
                     "before_delta": r.delta, "before_p_holm": r.p_randomization_holm})
    sweep = pd.read_csv(previous / "sweep.csv").pivot_table(index="size", columns="method", values="mean")
    tested = pd.read_csv(previous / "sweep" / "significance.csv")
    for size, means in sweep.iterrows():
        match = tested[(tested["system"] == f"late · {size}") & (tested["baseline"] == f"naive · {size}")]
        rows.append({"part": "sweep", "arm": str(size), "measure": "nDCG@10",
                     "before_delta": means["late"] - means["naive"],
                     "before_p_holm": float(match["p_randomization_holm"].iloc[0]) if len(match) else None})
    for folder in sorted(p for p in previous.iterdir() if (p / "significance.csv").exists()
                         and p.name not in ("sweep", "scifact")):
        for r in pd.read_csv(folder / "significance.csv").itertuples():
            if (r.system, r.baseline) == ("late", "naive"):
                rows.append({"part": folder.name, "arm": folder.name, "measure": r.measure,
                             "before_delta": r.delta, "before_p_holm": r.p_randomization_holm})
    return rows


def changes_from(previous: Path, late_vs_naive: pd.DataFrame, sweep_tests: pd.DataFrame,
                 long_tests: pd.DataFrame, before: str = "MiniLM", after: str = "nomic") -> pd.DataFrame:
    """Which late-vs-naive conclusions changed from an earlier run kept in ``previous`` (its
    ``late_vs_naive.csv``, ``sweep.csv`` and per-set ``significance.csv``) to this run's tests:
    one row per boundary strategy, swept size and long set that either run has, with both deltas,
    both Holm p-values, the finding each implies (:func:`finding`) and whether it changed."""
    def tested(part: str, arm: str, r) -> dict:
        return {"part": part, "arm": arm, "measure": r.measure, "after_delta": r.delta,
                "after_ci": f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]", "after_p_holm": r.p_randomization_holm}

    now = [tested("scifact", r.system.removeprefix("late · "), r) for r in late_vs_naive.itertuples()]
    now += [tested("sweep", r.system.removeprefix("late · "), r) for r in sweep_tests.itertuples()]
    now += [tested(r.dataset, r.dataset, r) for r in long_tests.itertuples()]
    table = pd.DataFrame(_previous_rows(previous)).merge(pd.DataFrame(now), on=["part", "arm", "measure"],
                                                         how="outer", sort=False)
    table[f"{before} finding"] = [finding(d, p) if not pd.isna(d) else "not run"
                                  for d, p in zip(table["before_delta"], table["before_p_holm"])]
    table[f"{after} finding"] = [finding(d, p) if not pd.isna(d) else "not run"
                                 for d, p in zip(table["after_delta"], table["after_p_holm"])]
    table["changed"] = table[f"{before} finding"] != table[f"{after} finding"]
    return table.rename(columns={"before_delta": f"{before} late − naive", "before_p_holm": f"{before} p (Holm)",
                                 "after_delta": f"{after} late − naive", "after_ci": f"{after} 95% CI",
                                 "after_p_holm": f"{after} p (Holm)"})
