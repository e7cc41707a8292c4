"""The ``grainlab`` command line: datasets, chunk, evaluate, reproduce."""

from __future__ import annotations

import argparse
import json
import os
import sys

from grainlab import settings
from grainlab.errors import GrainlabError


def _common() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--mirror", help=f"local dataset mirror folder (default ${settings.MIRROR_ENV})")
    return parent


def cmd_datasets(args: argparse.Namespace) -> int:
    from grainlab.data import REGISTRY, available

    paths = available(args.mirror)
    width = max(map(len, REGISTRY))
    for name, spec in REGISTRY.items():
        where = paths[name] or f"not here: downloads from {spec.url}"
        print(f"{name:<{width}}  {'available' if paths[name] else 'missing  '}  {where}")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from grainlab.chunking import get_chunker
    from grainlab.data import Document, document_text
    from grainlab.errors import MalformedData

    chunker = get_chunker(args.spec, tokenizer=args.tokenizer)
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            doc_id, title, text = str(record["_id"]), record.get("title", ""), record["text"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise MalformedData(f"stdin:{number}: expected a BEIR corpus line with _id and text ({exc})") from exc
        body = text if args.field == "text" else document_text(title, text)
        for chunk in chunker.chunk(Document(doc_id, body, title)):
            sys.stdout.write(json.dumps(chunk.to_record(), ensure_ascii=False) + "\n")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from grainlab.data import load_dataset
    from grainlab.evaluation import evaluate_run, read_trec_run

    dataset = load_dataset(args.dataset, mirror=args.mirror, split=args.split)
    run = read_trec_run(args.run_file)
    table = evaluate_run(run, dataset.qrels, args.measures)
    for measure, value in table.groupby("measure", sort=False)["value"].mean().items():
        print(f"{measure}\t{value:.4f}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from grainlab.reproduce import parse_parameters, reproduce

    summary = reproduce(profile=args.profile, only=args.only, mirror=args.mirror,
                        parameters=parse_parameters(args.param))
    print(f"summary written to {summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grainlab", description="Retrieval granularity experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    common = _common()

    p = sub.add_parser("datasets", parents=[common], help="known datasets and whether each is here")
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("chunk", parents=[common], help="chunk a BEIR corpus.jsonl from stdin to chunk jsonl")
    p.add_argument("spec", help="chunker spec, e.g. 'fixed_tokens(size=64,overlap=16)', 'sentences(n=5)', "
                                "'recursive(size=256)', 'none'")
    p.add_argument("--tokenizer", help="HF model id or tiktoken name (default: the spec's, cl100k_base)")
    p.add_argument("--field", choices=["title+text", "text"], default="title+text",
                   help="what to chunk; offsets refer to this text (default: title + ' ' + text, as BEIR/MTEB)")
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("evaluate", parents=[common], help="score a TREC run file against a dataset's qrels")
    p.add_argument("--dataset", required=True)
    p.add_argument("run_file")
    p.add_argument("--measures", nargs="+", default=["nDCG@10", "R@100"])
    p.add_argument("--split", default="test")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("reproduce", parents=[common], help="run the notebooks through papermill")
    p.add_argument("--profile", choices=["quick", "full"], default="quick")
    p.add_argument("--only", nargs="+", help="notebook names (default: all)")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="inject a notebook parameter (VALUE read as JSON when it parses), repeatable")
    p.set_defaults(func=cmd_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "mirror", None):
        os.environ[settings.MIRROR_ENV] = os.path.abspath(args.mirror)
    try:
        return args.func(args)
    except GrainlabError as exc:
        print(f"grainlab: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
