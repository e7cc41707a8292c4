"""``scripts/rekey_segmenter.py``: a table moves to segmenter 4's key only when its data is proven to
be cut into the same sentences."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from grainlab.chunking import sentences
from grainlab.chunking.sentences import SentenceChunker
from grainlab.chunking.structure import StructureChunker
from grainlab.data import Dataset, Document

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rekey_segmenter.py"


def _script():
    spec = importlib.util.spec_from_file_location("rekey_segmenter", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dataset(*texts: str) -> Dataset:
    return Dataset("toy", {f"d{i}": Document(f"d{i}", t) for i, t in enumerate(texts)}, {}, {})


def test_the_old_versions_are_the_segmenter_3_ones_and_come_back():
    rekey = _script()
    now = SentenceChunker.version, StructureChunker.version
    with rekey.segmenter_version("3"):
        assert (SentenceChunker.version, StructureChunker.version) == ("2.3", "3.3")
    assert (SentenceChunker.version, StructureChunker.version) == now == (f"2.{sentences.SEGMENTER_VERSION}",
                                                                         f"3.{sentences.SEGMENTER_VERSION}")


def test_english_and_unmended_japanese_text_are_proven_and_a_mended_one_is_not():
    rekey = _script()
    assert rekey.same_sentences(_dataset("One sentence. Another one!"), "sentences(n=1)") is None
    assert rekey.same_sentences(_dataset("これは文です。次の文です。"), "sentences(n=1)") is None
    why = rekey.same_sentences(_dataset("これは文です。", "東京e.g.。東京。東京"), "sentences(n=1)")
    assert why and "1 Japanese" in why
    assert sentences.japanese_starts.__name__ == "japanese_starts"  # the watch is taken off again
