"""Run with 31f5994's source on the path: is each manifest's key the old scheme's key recomputed now?

The old key hashed the source of the engine's packages, so a match proves that exactly that
commit's code computed the table from the manifest's data, system and settings. Its output is
the proof ``scripts/migrate_keys.py`` reads.

    git worktree add /tmp/old 31f5994
    PYTHONPATH=/tmp/old/src python scripts/old_keys.py results old_keys.json
"""

import glob
import json
import sys

from grainlab.experiments.identity import model_revisions, results_key
from grainlab.experiments.systems import Stages, System
from grainlab.spec import parse_spec


def system_from_name(name: str) -> System:
    """31f5994 has no ``System.from_name``: the same reading of a canonical name."""
    retrievers, chunker, aggregate, *rest = name.split("|")
    stages = None
    for part in rest:
        if part.startswith("stages("):
            _, params = parse_spec(part)
            fusion = params.pop("fusion", "none")
            stages = Stages(fusion=None if fusion == "none" else fusion, **params)
    specs = retrievers.split(" + ")
    return System(specs[0] if len(specs) == 1 else tuple(specs), chunker, None if aggregate == "units" else aggregate,
                  parents="parents" in rest, stages=stages)


def check(entry: dict, parameters: dict) -> dict:
    try:
        system = system_from_name(entry["name"])
        assert system.name == entry["name"], (system.name, entry["name"])
        reranker = system.stages.reranker if system.stages else None
        key = results_key(parameters["dataset_fingerprint"], system.chunker, system.retrievers, system=system.name,
                          measures=parameters["measures"], depth=parameters["depth"],
                          reranker=model_revisions(f"rerank(model={reranker})") if reranker else None)
        return {"name": entry["name"], "key": entry["key"], "recomputed": key, "match": key == entry["key"]}
    except Exception as exc:  # noqa: BLE001 - recorded as the reason the key is not proven
        return {"name": entry.get("name"), "key": entry.get("key"), "error": repr(exc)[:300], "match": False}


def main() -> None:
    out = {}
    for path in sorted(glob.glob(sys.argv[1] + "/**/manifest.json", recursive=True)):
        manifest = json.load(open(path))
        if manifest.get("systems"):
            out[path] = {label: check(entry, manifest["parameters"]) for label, entry in manifest["systems"].items()}
            print(path, sum(r["match"] for r in out[path].values()), "/", len(out[path]), flush=True)
    json.dump(out, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
