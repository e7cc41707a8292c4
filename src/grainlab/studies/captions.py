"""What each figure shows and what to look at in it: the report's figure captions.

Keys are figure names as notebooks save them (``save_figure(fig, name, ...)``); a key ending in
``_`` covers every name it starts (one figure per reader). A caption says what is drawn and which
comparison carries the claim; the numbers stay in the tables beside it.
"""

from __future__ import annotations

CAPTIONS: dict[str, str] = {
    "chunk_size_recall": "Answer recall@5 (QA sets) and nDCG@10 (SciFact) against chunk size, one line per "
                         "retriever, 95% intervals over questions. Look at where each line peaks: the paper's "
                         "claim is small chunks on SQuAD, large ones on NQ (its Table 2) and COVID-QA. The hatched "
                         "1,024 column is beyond the 512 word pieces MiniLM and bge-small read: it measures "
                         "truncation for them, not chunk size.",
    "chunk_size_recall_at1": "Answer recall@1 against chunk size: the same comparison at the strictest cut-off, "
                             "where a large chunk's extra context cannot make up for ranking.",
    "chunk_size_recall_vs_budget": "Answer recall against the tokens a reader would get (k chunks × their size): "
                                   "at an equal token budget, do small chunks still win?",
    "chunk_size_long_encoder": "The chunk-size sweep with nomic-embed-text-v1.5 (2,048-token encoder) on a sample "
                               "of stitched documents: whether a long encoder moves the best size up.",
    "dense_x_recall_at_k": "Passage answer recall@k by retrieval unit (passage, sentence, proposition) per "
                           "retriever, with the paper's GTR R@5 marks: propositions should lead at small k.",
    "dense_x_word_budget_recall": "Whether the answer is in the first l retrieved words, by unit: the paper's "
                                  "§5 comparison at an equal reading budget.",
    "dense_x_reader_": "The reader's exact match of the short answer over each retrieval unit, by context "
                       "budget l (tokens): a unit that retrieves better should feed the reader better at equal l.",
    "late_chunking_sweep": "Late − naive SciFact nDCG@10 at each chunk size: the paired "
                           "difference the test tested, with its 95% interval (filled where it "
                           "excludes zero), and the paper's difference at 256 tokens as a "
                           "diamond: late should sit above zero, most at small chunks.",
    "late_chunking_gap_by_position": "Late − naive answer recall@5 by where the answer sits "
                                     "inside its macro window, a panel per set × window, a point "
                                     "per chunk size with its cluster-bootstrap interval: "
                                     "compare a window's first quarter, which holds the "
                                     "documents' openings, with the deeper ones.",
    "late_chunking_long_grid": "Long late chunking against naive on whole long documents: each grid contrast's "
                               "late − naive with the verdict's cluster-bootstrap interval, by chunk size and "
                               "macro window, documents ranked (nDCG@10, the paper's measure) and chunks ranked "
                               "(answer recall@5): the paper claims late above zero.",
    "late_chunking_gap_by_position_documents": "The same as document nDCG@10 (documents ranked by their best "
                                               "chunk), the paper's long-document measure.",
    "longrag_recall_vs_tokens": "Answer recall against retrieved tokens for passages, documents "
                                "and grouped documents, by encoder and scoring (MaxP, whole "
                                "unit), with the paper's NQ recall at its units' approximate "
                                "sizes as diamonds: the paper's claim is fewer, longer units "
                                "reaching the same recall with fewer retrieval steps.",
    "longrag_reader_": "The long-context reader's EM, answer in its long answer, and whether the context held the "
                       "answer, by reader context: reader losses where the context had the answer are the "
                       "reader's, not retrieval's.",
    "lost_in_the_middle_qa": "Reader accuracy at each tested position of the gold document among "
                             "10 or 20, with our closed-book and oracle lines (black), the "
                             "paper's curves in the same colours (dotted, hollow squares) and "
                             "its closed-book and oracle (grey): a U shape, and whether the "
                             "middle falls below closed-book.",
    "lost_in_the_middle_readers": "Accuracy by gold position for each reader beside the paper's: whether the U "
                                  "shape depends on the reader.",
    "lost_in_the_middle_kv": "Key–value retrieval accuracy by the position of the gold key–value "
                             "pair among 75, per reader: the synthetic task where the paper's U "
                             "is sharpest.",
    "hybrid_rerank_stages_ndcg": "SciFact nDCG@10 at each pipeline stage (candidates, fused, "
                                 "reranked, context), one panel per system, documents and "
                                 "chunks, with the published single-retriever numbers as dashed "
                                 "lines: where each stage adds or loses.",
    "hybrid_rerank_stages_recall": "Recall@20 at each stage: what the reranker can still recover is bounded by "
                                   "the candidates fusion passes on.",
    "semantic_chunking_ami": "Adjusted mutual information between each splitter's segments and the stitched "
                             "documents' gold boundaries, with the paper's lines: semantic splitters should "
                             "recover the seams.",
    "semantic_chunking_maxmin_threshold": "Max–Min's AMI by similarity threshold: how sensitive the semantic "
                                          "splitter is to its one parameter.",
    "late_chunking_framing": "Late − naive answer recall by the window the answer starts in, with later windows "
                             "sliced mid-text (as the official code) or framed with their own [CLS], prefix and "
                             "[SEP]: whether the later-window loss is the framing's.",
    "late_chunking_window_similarity": "Mean cosine between the chunk vectors of one macro window by where the "
                                       "chunk starts: vectors that grow alike deep in a window leave little for "
                                       "ranking to tell apart.",
    "semantic_chunking_retrieval": "Each semantic splitter minus fixed-size chunks in answer recall@k, on "
                                   "stitched and native documents, with the verdicts' cluster intervals: Qu et "
                                   "al.'s claim is a gain on stitched documents that vanishes on native ones.",
    "semantic_chunking_size_matched": "Each semantic splitter minus fixed-size chunks of its own mean length in "
                                      "answer recall@k: the method compared, not the chunk size (the faithful "
                                      "test of Qu et al.'s claims).",
    "semantic_chunking_parent_child": "Answer recall against tokens read for parent–child and flat chunks: the "
                                      "parent's context costs tokens; look at equal token budgets.",
    "semantic_chunking_overlap": "Answer recall@k — the measure the overlap claim is tested on — "
                                 "against duplication for fixed chunks with growing overlap: "
                                 "what each extra indexed token buys.",
    "chroma_chunking_recall_precision": "Recall against precision of the top 5 chunks on "
                                        "Chroma's corpora in Chroma's convention, a colour per "
                                        "chunker family and a marker per configuration, with an "
                                        "arrow from the report's number to ours for each "
                                        "configuration it has: up and to the right is better.",
    "chroma_chunking_conventions": "The same retrieved chunks scored in Chroma's and in grainlab's conventions: "
                                   "overlapping chunks pay twice in Chroma's precision, so a ranking that changes "
                                   "with the convention is not a property of the chunker.",
    "your_documents_decision": "Hit, boundary retention (the evidence inside one chunk) and citation match of "
                               "each candidate on your held-out questions: the decision table beside it adds "
                               "tokens and cost.",
    "your_documents_hit_vs_tokens": "Each candidate's Hit@k on your held-out questions against the tokens it "
                                    "indexes, which is what embedding the corpus costs: up and to the left is better.",
    "your_documents_failures": "The stage that lost each missed question (source, extraction, chunking, "
                               "embedding, index, search), by candidate: what to fix first.",
}


def figure_caption(name: str) -> str | None:
    """The caption of a figure saved as ``name`` (a file stem), or ``None`` if none is written."""
    if name in CAPTIONS:
        return CAPTIONS[name]
    prefixes = [key for key in CAPTIONS if key.endswith("_") and name.startswith(key)]
    return CAPTIONS[max(prefixes, key=len)] if prefixes else None
