# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Late chunking (Günther et al. 2024)
#
# **Claim**: embedding the whole document first and mean-pooling each chunk's token span
# ("late chunking") gives better chunk embeddings than encoding every chunk on its own
# ("naive"), most of all for small chunks. Repo README, jina-embeddings-v2-small-en, fixed
# 256-token chunks, SciFact nDCG@10: naive 64.20, late 66.10, no chunking 63.89.
#
# **Mechanics** (`grainlab.retrieval.late`, tested against a direct transformers computation):
# chunk character spans → token spans through the tokenizer's offsets; the first span starts at
# token 0 (pools [CLS]), the last runs through [SEP]; chunks are mean-pooled and L2-normalised;
# documents score by their best chunk. Documents longer than the window are encoded in macro
# windows with `OVERLAP` tokens of left context ("long late chunking").
#
# **Deviation**: the paper's model is `jinaai/jina-embeddings-v2-small-en` with an 8,192-token
# window; it is not available offline, so the default here is `all-MiniLM-L6-v2` with a
# 512-token window (its position limit). Most SciFact abstracts fit in 512 word pieces, so late
# chunking still sees the whole document; longer stitched documents go through long late
# chunking, where each window sees at most 512 tokens of context instead of 8,192. With
# `MODEL = "jinaai/jina-embeddings-v2-small-en"` (online, `trust_remote_code`) the same notebook
# runs the paper's setting. No-chunking, naive and late all use the same 512-token limit.

# %% tags=["parameters"]
PROFILE = "quick"
MIRROR = ""
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MAX_LENGTH = 512
OVERLAP = 256
STRATEGIES = {
    "fixed 256 tokens": "fixed_tokens(size=256,overlap=0,tokenizer=sentence-transformers/all-MiniLM-L6-v2)",
    "5 sentences": "sentences(n=5)",
    "semantic breakpoints": "breakpoint(method=percentile,amount=90.0,size=512)",
}
SWEEP_SIZES = [16, 64, 256]
QUICK_SWEEP_SIZES = [32, 128, 512]
LONG_DATASETS = ["squad_dev_stitched", "covid_qa_stitched"]
LONG_CHUNK_SIZE = 128
ANSWER_KS = [1, 3, 5]
QUICK_IR_QUERIES = 40
QUICK_IR_DOCS = 300
QUICK_QA_DOCS = 1
QUICK_QA_QUERIES = 60
SEED = 0
N_RESAMPLES = 10000

# %%
import time

import pandas as pd
from IPython.display import Markdown, display

from grainlab.data import load_dataset, sample_dataset
from grainlab.evaluation import paired_comparison
from grainlab.evaluation.registry import ANSWER_RECALL
from grainlab.experiments import run_experiment
from grainlab.plots import plot_sweep, save_figure
from grainlab.reproduce import notebook_setup
from grainlab.studies import late_chunking as study

SETUP = notebook_setup("late_chunking", PROFILE, MIRROR)
QUICK, RESULTS, FIGURES = SETUP.quick, SETUP.results, SETUP.figures
STARTED = time.perf_counter()
DENSE = study.dense(MODEL, MAX_LENGTH)
LATE = study.late(MODEL, MAX_LENGTH, OVERLAP)
scifact = load_dataset("scifact")
if QUICK:
    scifact = sample_dataset(scifact, QUICK_IR_QUERIES, QUICK_IR_DOCS, SEED)
print(f"SciFact: {len(scifact.corpus)} documents, {len(scifact.queries)} queries")

# %% [markdown]
# ## SciFact: no chunking vs naive vs late, three boundary strategies

# %%
main = run_experiment(scifact, study.boundary_systems(DENSE, LATE, STRATEGIES), ["nDCG@10", "R@100"],
                      name=f"late_chunking/{PROFILE}/scifact", n_resamples=N_RESAMPLES, seed=SEED)
scores = main.aggregate.pivot_table(index="system", columns="measure", values="mean", sort=False)
display(scores.round(4))
pairs = [(f"late · {n}", f"naive · {n}") for n in STRATEGIES]
late_vs_naive = paired_comparison(main.per_query, pairs, "nDCG@10", n_resamples=N_RESAMPLES, seed=SEED)
late_vs_naive.to_csv(RESULTS / "late_vs_naive.csv", index=False)
display(late_vs_naive.round(4))

# %% [markdown]
# ## Chunk-size sweep: where does late chunking help most?
# The full profile sweeps 16, 64 and 256 tokens (each naive size is one more encoding of all of
# SciFact, ~7 min on this 2-core CPU; late chunking re-pools one shared encoding); pass
# `SWEEP_SIZES` to add sizes.

# %%
sweep = run_experiment(scifact, study.sweep_systems(DENSE, LATE, QUICK_SWEEP_SIZES if QUICK else SWEEP_SIZES, MODEL),
                       ["nDCG@10"], name=f"late_chunking/{PROFILE}/sweep", n_resamples=N_RESAMPLES, seed=SEED)
curve = sweep.aggregate
curve.to_csv(RESULTS / "sweep.csv", index=False)
display(curve.pivot_table(index="size", columns="method", values="mean").round(4))

fig = plot_sweep(curve, "size", "mean", "method", f"chunk size ({MODEL.split('/')[-1]} word pieces)",
                 "SciFact nDCG@10", f"Late vs naive chunking by chunk size ({MODEL.split('/')[-1]}, {PROFILE})")
save_figure(fig, "late_chunking_sweep", FIGURES)

# %% [markdown]
# ## Long documents: stitched SQuAD and COVID-QA (long late chunking)
# Documents of ≥50,000 characters are far longer than the 512-token window, so late chunking
# runs in macro windows with `OVERLAP` tokens of context. Answer-string recall over chunks.

# %%
long_rows = []
for name in LONG_DATASETS:
    data = load_dataset(name)
    if QUICK:
        data = sample_dataset(data, QUICK_QA_QUERIES, QUICK_QA_DOCS, SEED, mode="docs")
    spec = f"fixed_tokens(size={LONG_CHUNK_SIZE},overlap=0,tokenizer={MODEL})"
    result = run_experiment(data, study.long_systems(DENSE, LATE, spec), [ANSWER_RECALL @ k for k in ANSWER_KS],
                            name=f"late_chunking/{PROFILE}/{name}", n_resamples=N_RESAMPLES, seed=SEED)
    long_rows.append(result.aggregate)
    display(paired_comparison(result.per_query, [("late", "naive")], ANSWER_RECALL @ max(ANSWER_KS),
                              n_resamples=N_RESAMPLES, seed=SEED).round(4))
long_table = pd.concat(long_rows).pivot_table(index=["dataset", "system"], columns="measure", values="mean")
long_table.to_csv(RESULTS / "long_documents.csv")
display(long_table.round(4))

# %% [markdown]
# ## Paper vs ours

# %%
note = (f"Profile **{PROFILE}**, SciFact {len(scifact.queries)} queries / {len(scifact.corpus)} documents, "
        f"model {MODEL} (paper: {study.PAPER_MODEL}), window {MAX_LENGTH}, overlap {OVERLAP}. The paper's arms "
        f"use {study.PAPER_BOUNDARY} chunks; the sweep above shows the other sizes.")
report = study.report(scores["nDCG@10"], late_vs_naive, note)
report.save(RESULTS)
display(Markdown(report.markdown()))

# %% [markdown]
# ## Conclusion
# Late chunking reproduces here where "late" beats "naive" on the same chunks with a significant
# paired test (the `late_vs_naive` table and the report's p-value); the sweep shows at which chunk
# sizes that holds. A 512-position encoder limits what late chunking can add on SciFact, whose
# documents mostly fit one window already; the long-document rows show the macro-window case.

# %%
print(f"notebook finished in {time.perf_counter() - STARTED:.0f} s")
