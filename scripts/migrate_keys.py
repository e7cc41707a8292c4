"""Re-key stored per-query tables from the source-fingerprint keys to the version keys, without recomputing.

A table moves to its new key only when its old key is proven: ``OLD_KEYS`` (a JSON file written
by ``scripts/old_keys.py`` run at the commit that made the tables, 31f5994) says the key recorded
in its manifest is exactly the old scheme's key recomputed from the manifest at that commit, so
that commit's source computed it from that data, system and settings. Every other table keeps its
old key (the next run recomputes it; ``pack-results --prune`` keeps it until then) and is listed
with the reason. Run ``grainlab verify`` after it: a sample of the moved rows is recomputed.

    python scripts/migrate_keys.py OLD_KEYS [--results results] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from grainlab.experiments.identity import results_key
from grainlab.experiments.systems import System
from grainlab.files import atomic_write_text
from grainlab.packing import STORED_KEY


def _renamed(name: str, old: str, new: str) -> str:
    match = list(STORED_KEY.finditer(name))[-1]
    return name[:match.start(1)] + new[:12] + name[match.end(1):]


def migrate_experiment(manifest_path: Path, proven: dict[str, dict], dry_run: bool) -> tuple[int, list[str]]:
    """Move one experiment's proven tables to their new keys; the count moved and what stayed."""
    manifest = json.loads(manifest_path.read_text("utf-8"))
    parameters = manifest["parameters"]
    folder = manifest_path.parent / "per_query"
    moved, stayed = 0, []
    renames: dict[str, str] = {}
    for label, entry in manifest["systems"].items():
        check = proven.get(label, {})
        if not check.get("match") or check.get("key") != entry["key"]:
            stayed.append(f"{manifest_path.parent}: {label}: old key not proven "
                          f"({check.get('error') or 'recomputed at 31f5994 as another key: computed by older code'})")
            continue
        old = entry["key"]
        new = results_key(parameters["dataset_fingerprint"], System.from_name(entry["name"]),
                          list(parameters["measures"]), int(parameters["depth"]))
        renames[old] = new
        files = [p for p in sorted(folder.glob(f"*{old[:12]}*")) if folder.exists()] if folder.exists() else []
        for path in files:
            target = path.with_name(_renamed(path.name, old, new))
            if not dry_run:
                if path.suffix == ".json":
                    record = json.loads(path.read_text("utf-8"))
                    record["identity"] = {"key": new, "system": entry["name"], "migrated_from": old}
                    if record.get("runs"):  # the runs move with the table: named by its new key
                        record["runs"] = {stage: f"{new[:12]}.{stage}.run" for stage in record["runs"]}
                    atomic_write_text(path, json.dumps(record, indent=1, default=str))
                path.rename(target)
        ignore = folder / ".gitignore"
        if not dry_run and ignore.exists():
            lines = ignore.read_text("utf-8").splitlines()
            names = sorted({_renamed(n, old, new) if old[:12] in n else n for n in lines})
            atomic_write_text(ignore, "".join(f"{n}\n" for n in names))
        entry.update(key=new, supersedes=[], migrated_from=old)
        if entry.get("runs"):
            entry["runs"] = {stage: f"{new[:12]}.{stage}.run" for stage in entry["runs"]}
        moved += 1
    if not dry_run and renames:
        atomic_write_text(manifest_path, json.dumps(manifest, indent=1, default=str))
        systems_csv = manifest_path.parent / "systems.csv"
        if systems_csv.exists():
            table = pd.read_csv(systems_csv, dtype=str, keep_default_na=False)
            if "key" in table:
                table["key"] = table["key"].map(lambda k: renames.get(k, k))
                atomic_write_text(systems_csv, table.to_csv(index=False))
    return moved, stayed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_keys", type=Path)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    checks = json.loads(args.old_keys.read_text("utf-8"))
    total, kept = 0, []
    for manifest_path in sorted(args.results.glob("**/manifest.json")):
        systems = json.loads(manifest_path.read_text("utf-8")).get("systems") or {}
        if not systems:
            continue
        proven = next((v for k, v in checks.items() if Path(k).resolve() == manifest_path.resolve()), {})
        moved, stayed = migrate_experiment(manifest_path, proven, args.dry_run)
        total += moved
        kept += stayed
        print(f"{manifest_path.parent}: {moved} of {len(systems)} re-keyed")
    for line in kept:
        print(f"kept: {line}")
    print(f"{total} tables re-keyed, {len(kept)} kept under their old keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
