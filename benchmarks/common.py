"""Shared helpers for the benchmarks: the SciFact mirror and result files."""

from __future__ import annotations

import json
import os
import platform
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def mirror() -> str:
    path = os.environ.get("GRAINLAB_MIRROR") or str(HERE.parent.parent / "shared" / "data")
    if not Path(path, "beir_scifact").exists():
        raise SystemExit("benchmarks need SciFact: set GRAINLAB_MIRROR to the dataset mirror")
    return path


@contextmanager
def timer(store: dict, key: str):
    tick = time.perf_counter()
    yield
    store[key] = round(time.perf_counter() - tick, 3)


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), or the platform's answer where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def save(name: str, payload: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {"benchmark": name, "machine": platform.platform(), "cpu": cpu_model(), "cpus": os.cpu_count(),
               **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1))
    print(json.dumps(payload, indent=1))
    return path
