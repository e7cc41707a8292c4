"""LLM readers: prompts from the papers and a cached causal-LM generator named by HF id."""

from grainlab.readers.llm import CausalLMReader, Generation
from grainlab.readers.prompts import (
    QA_INSTRUCTION,
    closedbook_prompt,
    kv_prompt,
    qa_prompt,
)

__all__ = ["CausalLMReader", "Generation", "QA_INSTRUCTION", "closedbook_prompt", "kv_prompt", "qa_prompt"]
