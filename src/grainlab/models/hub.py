"""Whether the Hugging Face hub can be reached (probed once per process)."""

from __future__ import annotations

import functools
import os
import socket


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    """False when ``HF_HUB_OFFLINE`` is set or huggingface.co cannot be reached."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False
