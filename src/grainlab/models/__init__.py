"""Models by Hugging Face id: resolution to local copies, tokenizers, encoders."""

from grainlab.models.encoders import Encoder, EncoderConfig, get_encoder
from grainlab.models.resolve import OFFLINE_COPIES, ResolvedModel, resolve_model
from grainlab.models.tokenizers import TextTokenizer, get_tokenizer

__all__ = ["Encoder", "EncoderConfig", "OFFLINE_COPIES", "ResolvedModel", "TextTokenizer",
           "get_encoder", "get_tokenizer", "resolve_model"]
