"""Ray, when asked for: which cluster, and connecting to it once per process.

Ray is optional (``pip install "grainlab[ray]"``). Nothing here imports it until a run asks for it:
``$GRAINLAB_RAY`` (or ``grainlab reproduce --ray [ADDRESS]``) set to ``local`` starts a local
cluster, to ``auto`` or ``1`` lets ``ray.init()`` decide (``$RAY_ADDRESS`` when set, else local),
and to an address (``ray://head:10001``) joins that cluster. Unset, everything runs in-process.
"""

from __future__ import annotations

import os
from typing import Any

from grainlab.errors import ConfigError

RAY_ENV = "GRAINLAB_RAY"
FORWARDED_ENV = ("GRAINLAB_CACHE", "GRAINLAB_MIRROR", "GRAINLAB_DEVICE", "GRAINLAB_VERIFY_RELEASES",
                 "GRAINLAB_FAISS_BUILD_THREADS", "HF_HUB_OFFLINE")


def ray_requested(override: str | bool | None = None) -> str | None:
    """The cluster asked for: ``None`` (no Ray), ``"local"``, ``"auto"`` or an address."""
    value = override if override is not None else os.environ.get(RAY_ENV, "")
    if value is False or value in ("", "0", "false", "no", "off"):
        return None
    if value is True or value in ("1", "true", "yes", "on", "auto"):
        return "auto"
    return str(value)


def ray_module() -> Any:
    """``ray``, or a clear error naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError('Ray was asked for ($GRAINLAB_RAY or --ray) but is not installed: '
                          'pip install "grainlab[ray]" (or pip install ray), or unset GRAINLAB_RAY') from exc
    return ray


def connect(target: str | None = "auto", num_cpus: int | None = None) -> Any:
    """Connect this process to Ray once (later calls reuse the connection) and return ``ray``.

    ``local`` starts a private local cluster (``num_cpus`` workers' worth of CPUs), ``auto`` is
    ``ray.init()``'s own choice (``$RAY_ADDRESS``, else local), anything else is a cluster address.
    grainlab's settings (cache, mirror, device) travel to the workers as environment variables."""
    ray = ray_module()
    if ray.is_initialized():
        return ray
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "runtime_env": {"env_vars": env} if env else None}
    if target == "local":
        ray.init(address="local", num_cpus=num_cpus, **kwargs)
    elif target in (None, "auto"):
        ray.init(num_cpus=num_cpus if not os.environ.get("RAY_ADDRESS") else None, **kwargs)
    else:
        ray.init(address=target, **kwargs)
    return ray
