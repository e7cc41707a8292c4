"""Which Japanese sentence splitter is right on real Japanese articles: grainlab's (pysbd's Japanese
rules, ``chunking.sentences``) against bunkai (Megagon Labs' rule-based Japanese sentence boundary
disambiguation), both scored against a written reference.

The reference is a rule a reader can check by eye, written here and independent of both splitters:
a sentence ends at the end of every non-empty line (headings, list items, table rows, code) and,
inside a line, after ``。！？!?`` with any closing brackets that follow, unless the mark stands inside
an open bracket (``「…？」と尋ねた`` is one sentence). Boundaries are character offsets (the end of a
sentence, trailing space trimmed). Every disagreement with the reference is listed with its context
and a reason class, so a reader can check that the reference, not the splitter, is right there.

bunkai 1.5.7 imports a tokenizer class that transformers 5 removed, but only for its optional
line-break model; its rule-based pipeline (used here, lines given one at a time as pysbd sees them)
needs neither, so transformers is hidden from it while it is imported.

Run: ``python benchmarks/japanese_sentences.py`` (``GRAINLAB_MIRROR`` or ``../shared/data``).
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from importlib.metadata import version
from pathlib import Path

from common import HERE, save

from grainlab.chunking.sentences import sentence_spans

ARTICLES = ("chunk_design_by_evaluation.txt", "chunking_hybrid_reranker.txt", "maxmin_semantic_chunking.txt")
OPENERS, CLOSERS = "「『（(【〔［[", "」』）)】〕］]"
ENDS = "。！？!?"


def articles_folder() -> Path:
    root = Path(os.environ.get("GRAINLAB_MIRROR") or HERE.parent.parent / "shared" / "data")
    folder = root / "japanese_rag_articles"
    if not folder.is_dir():
        raise SystemExit(f"no {folder}: set GRAINLAB_MIRROR to the folder holding japanese_rag_articles/")
    return folder


def reference_boundaries(text: str) -> set[int]:
    """Sentence ends by the module's written rule (line ends; ``。！？!?`` plus closers at bracket depth 0)."""
    ends: set[int] = set()
    line_start = 0
    for line in text.split("\n"):
        depth, i = 0, 0
        while i < len(line):
            char = line[i]
            if char in OPENERS:
                depth += 1
            elif char in CLOSERS:
                depth = max(depth - 1, 0)
            elif char in ENDS and depth == 0:
                j = i + 1
                while j < len(line) and (line[j] in ENDS or line[j] in CLOSERS):
                    j += 1
                ends.add(line_start + j)
                i = j
                continue
            i += 1
        if line.strip():
            ends.add(line_start + len(line.rstrip()))
        line_start += len(line) + 1
    return ends


def bunkai_splitter():
    """bunkai's rule-based splitter (see the module docstring for why transformers is hidden)."""
    hidden = sys.modules.get("transformers")
    sys.modules["transformers"] = None  # type: ignore[assignment]
    try:
        from bunkai import Bunkai
    finally:
        if hidden is None:
            del sys.modules["transformers"]
        else:
            sys.modules["transformers"] = hidden
    return Bunkai()


def bunkai_boundaries(text: str, bunkai) -> set[int]:
    """Sentence ends from bunkai, given the text line by line, located in ``text``."""
    ends: set[int] = set()
    line_start = 0
    for line in text.split("\n"):
        cursor = line_start
        for sentence in bunkai(line) if line.strip() else ():
            stripped = sentence.strip()
            found = text.find(stripped, cursor) if stripped else -1
            if found >= 0:
                cursor = found + len(stripped)
                ends.add(cursor)
        line_start += len(line) + 1
    return ends


def reason(text: str, end: int) -> str:
    """A coarse class for a boundary one side has and the other lacks (for reading, not scoring)."""
    before = text[max(text.rfind("\n", 0, end) + 1, end - 40):end]
    if re.fullmatch(r"\s*\d+\.", before):
        return "after a list number"
    if before.endswith(("\\)", "\\]")):
        return "after inline math"
    if before.endswith(tuple(ENDS)) and text[end:end + 1] in CLOSERS:
        return "inside brackets"
    if before.endswith(tuple(ENDS)):
        return "after sentence-final punctuation"
    if before.endswith(tuple(CLOSERS)):
        return "after a closing bracket"
    return "other"


def score(found: set[int], reference: set[int]) -> dict[str, float | int]:
    hits = len(found & reference)
    return {"boundaries": len(found), "reference": len(reference), "correct": hits,
            "precision": round(hits / len(found), 4) if found else 0.0,
            "recall": round(hits / len(reference), 4) if reference else 0.0}


def main() -> None:
    folder = articles_folder()
    bunkai = bunkai_splitter()
    rows, disagreements = [], []
    totals: dict[str, Counter] = {"pysbd": Counter(), "bunkai": Counter()}
    for name in ARTICLES:
        text = (folder / name).read_text(encoding="utf-8")
        reference = reference_boundaries(text)
        found = {"pysbd": {end for _, end in sentence_spans(text)}, "bunkai": bunkai_boundaries(text, bunkai)}
        for splitter, ends in found.items():
            row = score(ends, reference)
            totals[splitter].update({k: row[k] for k in ("boundaries", "reference", "correct")})
            rows.append({"article": name, "characters": len(text), "splitter": splitter, **row})
            for end in sorted(ends ^ reference):
                disagreements.append({"article": name, "splitter": splitter, "offset": end,
                                      "kind": "extra" if end in ends else "missed", "reason": reason(text, end),
                                      "context": text[max(0, end - 25):end] + " ‖ " + text[end:end + 15]})
    characters = sum(row["characters"] for row in rows if row["splitter"] == "pysbd")
    for splitter, total in totals.items():
        rows.append({"article": "all three", "characters": characters, "splitter": splitter,
                     "boundaries": total["boundaries"], "reference": total["reference"], "correct": total["correct"],
                     "precision": round(total["correct"] / total["boundaries"], 4),
                     "recall": round(total["correct"] / total["reference"], 4)})
    classes = Counter((d["splitter"], d["kind"], d["reason"]) for d in disagreements)
    save("japanese_sentences", {
        "pysbd": version("pysbd"), "bunkai": version("bunkai"),
        "disagreement_classes": {f"{s} {k}: {r}": n for (s, k, r), n in sorted(classes.items())},
        "disagreements": disagreements, "rows": rows})


if __name__ == "__main__":
    main()
