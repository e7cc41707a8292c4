"""Model loading without transformers' per-tensor "Loading weights" bar: a run shows its own bars
(one per long step), and a notebook's output should not repeat that line for every load."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' (and the hub's) progress bars off inside the block, as they were after it."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()
