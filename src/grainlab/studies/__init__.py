"""One module per reproduction (one per notebook): the systems a paper compares, the paper's
numbers, study-specific data preparation and diagnostics, and a ``report()`` that returns the
paper-vs-ours rows (``studies.report.Report``) the summary is built from.

=====================  ==========================================  ========
module                 paper                                       notebook
=====================  ==========================================  ========
``chunk_size``         Bhat et al. 2025                            01
``dense_x``            Chen et al. 2024 (Dense X Retrieval)        02
``late_chunking``      Günther et al. 2024                         03
``longrag``            Jiang et al. 2024                           04
``lost_in_the_middle`` Liu et al. 2024 (+ ``multidoc`` examples)   05
``hybrid_rerank``      Cormack et al. 2009 (RRF), BEIR/MTEB        06
``semantic_chunking``  Kiss et al. 2025; Qu et al. 2024            07
=====================  ==========================================  ========

A new study is one module here (systems, paper numbers, ``report``) plus one notebook that runs
``experiments.run_experiment`` over its systems.
"""
