"""Chunkers behind one protocol and a name registry; every chunk keeps exact offsets."""

from grainlab.chunking.base import Chunk, Chunker, chunk_id, register
from grainlab.chunking.cluster import ClusterSemanticChunker
from grainlab.chunking.factory import available_chunkers, get_chunker
from grainlab.chunking.fixed import FixedTokenChunker, WholeDocument
from grainlab.chunking.passages import PassageChunker
from grainlab.chunking.propositions import PropositionChunker, decomposition_report
from grainlab.chunking.recursive import RecursiveChunker
from grainlab.chunking.semantic import (
           BreakpointChunker,
           MaxMinChunker,
           breakpoint_groups,
           maxmin_groups,
)
from grainlab.chunking.sentences import SentenceChunker, sentence_spans
from grainlab.chunking.separators import RecursiveSeparatorChunker
from grainlab.chunking.structure import ParentChildChunker, StructureChunker, parse_sections

__all__ = ["BreakpointChunker", "Chunk", "Chunker", "ClusterSemanticChunker", "RecursiveSeparatorChunker", "FixedTokenChunker", "MaxMinChunker", "ParentChildChunker", "PassageChunker", "PropositionChunker",
           "RecursiveChunker",
           "SentenceChunker", "StructureChunker", "parse_sections",
           "WholeDocument", "available_chunkers", "chunk_id", "get_chunker", "register", "sentence_spans",
           "breakpoint_groups", "decomposition_report", "maxmin_groups"]
