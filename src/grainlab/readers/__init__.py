"""LLM readers: prompts from the papers and a cached causal-LM generator named by HF id."""

from grainlab.readers.base import Generation, Reader
from grainlab.readers.factory import BACKENDS, choose_backend, get_reader, shared_reader
from grainlab.readers.llm import CausalLMReader
from grainlab.readers.prompts import (
    QA_INSTRUCTION,
    closedbook_prompt,
    kv_prompt,
    longrag_prompt,
    qa_prompt,
    short_answer_prompt,
)
from grainlab.readers.propositions import (
    ParsedPropositions,
    parse_propositions,
    proposition_prompt,
    propositionize,
)

__all__ = ["BACKENDS", "CausalLMReader", "Generation", "Reader", "choose_backend", "get_reader", "ParsedPropositions", "QA_INSTRUCTION", "closedbook_prompt", "kv_prompt", "longrag_prompt",
           "parse_propositions", "proposition_prompt", "propositionize", "qa_prompt", "shared_reader", "short_answer_prompt"]
