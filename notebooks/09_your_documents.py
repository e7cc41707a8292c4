# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: grainlab (.venv)
#     language: python
#     name: grainlab
# ---

# %% [markdown]
# # Your documents: which chunker, decided on your own questions
#
# Point `DOCS` at a folder of `.md`/`.txt`/`.html`/`.pdf` files (or a `documents.jsonl`) and
# `QUESTIONS` at a `questions.jsonl` whose questions carry their **gold evidence span** (document
# id and character offsets, or an answer string to locate), and this notebook makes the chunking
# decision the way practitioners make it (`grainlab.studies.your_documents`; the same as
# `grainlab compare DOCS QUESTIONS --out DIR`):
#
# 1. a tuning split (`TUNE_SHARE` of the questions, stable under additions) picks the candidate
#    and the unanswerable-score threshold; the rest confirms it, once;
# 2. candidates change the chunker only — extraction, the encoder and search stay fixed;
# 3. one table decides: Hit@k, MRR@10, boundary retention (the span whole in one retrieved unit),
#    citation match, duplication, mean retrieved tokens, chunks, embedding tokens and cost, false
#    retrievals of unanswerable questions, seconds, with the missed questions' ids beside each
#    rate and the acceptance criteria marked pass/fail;
# 4. the stop rule: within 1 point of the best Hit@k, a candidate indexing at most half as much wins;
# 5. every failed question is attributed to the first stage that lost it (source, extraction,
#    chunking, embedding, index, search).
#
# **The default** treats Chroma's chunking evaluation (five corpora, 472 questions with gold
# excerpts; notebook 08) as "your documents", so the notebook runs offline top to bottom. Its five
# corpora are too few documents to cluster the paired tests on, so they cluster on overlapping
# evidence (said in the table). The quick profile keeps two small corpora (chat logs, the speech)
# and 20 questions of each. Questions without gold spans cannot be scored here; generate some with
# `grainlab questions DOCS --out questions.jsonl` (a local reader quotes its evidence; only verbatim
# quotes are kept; the tables then say the questions were generated).

# %% tags=["parameters"]
# another model: edit this cell, or `grainlab reproduce --only your_documents -p 'RETRIEVER="dense(model=BAAI/bge-small-en-v1.5)"'`
PROFILE = "quick"
MIRROR = ""
DOCS = "chroma_chunking_eval"
QUESTIONS = ""
CHUNKERS = {
    "A: fixed 256/32": "fixed_tokens(size=256,overlap=32)",
    "B: fixed 512/64": "fixed_tokens(size=512,overlap=64)",
    "C: sections ≤ 800": "structure(size=800)",
    "D: 256 → parent ≤ 1200": "parent_child(child_size=256,parent_size=1200,parents=structure)",
}
RETRIEVER = ""  # "": the language's default (English: all-MiniLM-L6-v2; Japanese: bm25(language=ja))
LANGUAGE = "auto"  # "auto" (detected from the documents' script), "en" or "ja"
RERANKER = ""
K = 5
TUNE_SHARE = 0.2
PRICE_PER_MTOK = 0.02
ACCEPT = "hit@{k}>=0.92,boundary_retention>=0.9,mean_tokens<=3000"
THRESHOLD = None
KEEP_UNLOCATED = False
QUICK_DOCUMENTS = ["chatlogs", "state_of_the_union"]
QUICK_QUESTIONS_PER_DOCUMENT = 20
SEED = 0
N_RESAMPLES = 10000

# %%
import time

from IPython.display import Markdown, display

from grainlab.figures import show_figure
from grainlab.figures.your_documents import report_with_figures
from grainlab.reproduce import notebook_setup
from grainlab.studies import your_documents as study

SETUP = notebook_setup("your_documents", PROFILE, MIRROR)
QUICK, RESULTS, FIGURES = SETUP.quick, SETUP.results, SETUP.figures
STARTED = time.perf_counter()
inputs = study.load_inputs(DOCS, QUESTIONS or None, keep_unlocated=KEEP_UNLOCATED)
if QUICK:
    inputs = study.subset_inputs(inputs, QUICK_DOCUMENTS if set(QUICK_DOCUMENTS) <= set(inputs.dataset.corpus) else (),
                                 QUICK_QUESTIONS_PER_DOCUMENT)
data = inputs.dataset
print(f"{len(data.corpus)} documents ({sum(len(d.text) for d in data.corpus.values()):,} characters), "
      f"{len(data.queries)} questions ({inputs.questions_from}); evidence: {data.info.get('evidence', 'gold spans')}; "
      f"{len(CHUNKERS)} candidates")

# %% [markdown]
# ## The comparison
# Every candidate is chunked, indexed and searched (stored per system, so a rerun is fast), scored
# per question, costed, attributed and tested.

# %%
comparison = study.compare(inputs, CHUNKERS, RETRIEVER or None, reranker=RERANKER or None, k=K,
                           tune_share=TUNE_SHARE, price_per_mtok=PRICE_PER_MTOK, accept=ACCEPT, threshold=THRESHOLD,
                           out=RESULTS, seed=SEED, n_resamples=N_RESAMPLES, language=LANGUAGE)
columns = ["chunker", *study.decision_columns(K), *(c.name for c in comparison.criteria)]
report_with_figures(RESULTS)  # the report compare wrote, with its figures drawn from the tables beside it
print(f"clusters for the paired tests: {comparison.info['clusters']}")

# %% [markdown]
# ## The decision table (held-out questions)

# %%
display(study.decision_view(comparison.decision, K, comparison.criteria))
display(comparison.decision[["chunker", f"hit@{K}_misses", f"hit@{K}_missed_ids", "boundary_misses",
                             "false_hits", "false_hit_ids"]])
display(Markdown(f"**{comparison.recommendation}**"))
show_figure("your_documents_hit_vs_tokens", RESULTS, FIGURES)

# %% [markdown]
# The tuning split, which picked the candidate (and each candidate's unanswerable threshold):

# %%
display(comparison.tuning[columns + ["threshold"]].round(4))

# %% [markdown]
# ## Paired tests against the recommended candidate
# Hit@k per held-out question, the difference's cluster bootstrap interval, the cluster
# randomization p (Holm over the pairs), the design effect and the number of clusters.

# %%
display(comparison.paired.round(4))

# %% [markdown]
# ## Where questions are lost
# Each failed question × candidate at the first stage that lost it; every id is in
# `failures.csv` (with its evidence and the units retrieved instead).

# %%
counts = study.failure_counts(comparison.failures)
display(counts)
display(comparison.failures.head(20))
show_figure("your_documents_decision", RESULTS, FIGURES)  # drawn from the stored tables (grainlab.figures)
if not comparison.failures.empty:
    show_figure("your_documents_failures", RESULTS, FIGURES)

# %% [markdown]
# ## By category and document kind

# %%
display(comparison.by_category[comparison.by_category["split"] == "confirm"].round(3))

# %% [markdown]
# ## The decision, saved
# `decision.csv`, `tuning.csv`, `by_category.csv`, `failures.csv`, `paired.csv`, `per_question.csv`,
# `chunks.jsonl` (citation metadata of every chunk) and `report.html` are in the results folder.

# %%
report = study.decision_report(comparison, note=(
    f"Profile **{PROFILE}**; {len(data.corpus)} documents, {len(data.queries)} questions ({inputs.questions_from}); "
    f"retriever {RETRIEVER}{' + reranker ' + RERANKER if RERANKER else ''}; top {K}; clusters: "
    f"{comparison.info['clusters']}."))
report.save(RESULTS)
display(Markdown(report.markdown()))

# %%
print(f"notebook finished in {time.perf_counter() - STARTED:.0f} s")
