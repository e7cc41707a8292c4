"""Run every benchmark in its own process and print one summary table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

for script in ("bench_bm25.py", "bench_encoding.py", "bench_cache.py"):
    subprocess.run([sys.executable, str(HERE / script)], check=True, cwd=HERE)
for path in sorted((HERE / "results").glob("*.json")):
    data = json.loads(path.read_text())
    print(path.stem, {k: v for k, v in data.items() if k.endswith(("_s", "ratio_st_over_grainlab", "speedup_total",
                                                                    "speedup_artifact_cache", "speedup_full_resume"))})
