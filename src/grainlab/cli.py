"""The ``grainlab`` command line: datasets, chunk, evaluate, reproduce, figures, report, verify, tables, compare."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from grainlab import settings
from grainlab.errors import ConfigError, GrainlabError


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


def read_corpus_lines(stream, name: str = "stdin"):
    """``(line number, _id, title, text)`` of a BEIR ``corpus.jsonl`` stream (bytes), validated:
    undecodable bytes, lone surrogates, non-string fields and repeated ids are errors naming the line."""
    from grainlab.data.validate import decoded_lines, json_lines
    from grainlab.errors import MalformedData

    seen: dict[str, int] = {}
    for number, record in json_lines(decoded_lines(stream, name, where=" of the input"), name):
        if not isinstance(record, dict) or "_id" not in record or "text" not in record:
            raise MalformedData(f"{name}:{number}: expected a BEIR corpus line with _id and text")
        doc_id, title, text = record["_id"], record.get("title") or "", record["text"]
        for field, value in (("_id", doc_id), ("title", title), ("text", text)):
            if not isinstance(value, str):
                raise MalformedData(f"{name}:{number}: {field} must be a string, got {type(value).__name__} {value!r:.40}")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise MalformedData(f"{name}:{number}: {field} holds a lone surrogate (an unpaired \\ud8xx escape); "
                                    f"fix the producer's encoding") from None
        if doc_id in seen:
            raise MalformedData(f"{name}:{number}: _id {doc_id!r} repeats line {seen[doc_id]}; ids must be unique")
        seen[doc_id] = number
        yield number, doc_id, title, text


def cmd_chunk(args: argparse.Namespace) -> int:
    from grainlab.chunking import get_chunker
    from grainlab.data import Document, document_text
    from grainlab.errors import ConfigError

    chunker = get_chunker(args.spec, tokenizer=args.tokenizer)
    if args.tokenizer and "tokenizer" not in chunker.params():
        raise ConfigError(f"chunker {chunker.name!r} takes no tokenizer; drop --tokenizer")
    if sys.stdin.isatty():
        raise ConfigError("grainlab chunk reads a BEIR corpus.jsonl from standard input: "
                          "grainlab chunk SPEC < corpus.jsonl")
    for _, doc_id, title, text in read_corpus_lines(sys.stdin.buffer):
        body = text if args.field == "text" else document_text(title, text)
        for chunk in chunker.chunk(Document(doc_id, body, title)):
            sys.stdout.write(json.dumps(chunk.to_record(), ensure_ascii=False) + "\n")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from grainlab.data import get_spec, is_folder_path, load_dataset
    from grainlab.data.irds import is_irds
    from grainlab.evaluation import evaluate_run, read_trec_run
    from grainlab.evaluation.measures import parse_measures, run_overlap

    if not is_folder_path(args.dataset) and not is_irds(args.dataset):
        get_spec(args.dataset)
    parse_measures(args.measures)
    run = read_trec_run(args.run_file)
    dataset = load_dataset(args.dataset, mirror=args.mirror, split=args.split)
    problems = run_overlap(run, dataset.qrels, dataset.corpus)
    for problem in problems:
        print(f"grainlab: WARNING: {problem}", file=sys.stderr)
    if problems and args.strict:
        print("grainlab: error: --strict: not scoring a run that does not fit the dataset", file=sys.stderr)
        return 3
    identical = bool(dataset.info.get("queries_in_corpus"))
    if identical:
        print(f"grainlab: note: {dataset.name}'s queries are in its corpus: a hit whose id equals the query id "
              f"is dropped, as BEIR and MTEB score it", file=sys.stderr)
    table = evaluate_run(run, dataset.qrels, args.measures, ignore_identical_ids=identical)
    for measure, value in table.groupby("measure", sort=False)["value"].mean().items():
        print(f"{measure}\t{value:.4f}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from grainlab.distributed import RAY_ENV
    from grainlab.reproduce import parse_parameters, reproduce

    if args.stored:
        return _replay()

    if args.ray:
        os.environ[RAY_ENV] = args.ray  # the notebook kernels inherit it
    summary = reproduce(profile=args.profile, only=args.only, mirror=args.mirror,
                        parameters=parse_parameters(args.param), allow_dirty=args.allow_dirty)
    print(f"summary written to {summary}")
    return 0


def _system_bar(desc: str):
    """A progress bar counting recomputed systems, and the callback that advances it."""
    from tqdm.auto import tqdm

    bar = tqdm(desc=desc, unit="system", leave=False)

    def progress(what: str) -> None:
        bar.set_postfix_str(what[-60:])
        bar.update()

    return bar, progress


def _print_findings(report) -> None:
    """What a sampled recompute could not check, found damaged, or found different."""
    for where, why in report.skipped:
        print(f"not checked: {where}: {why}")
    for damaged in report.damaged:
        print(f"DAMAGED: {damaged}")
    for d in report.differences:
        print(f"DIFFERS: {d.experiment}: {d.system} [{d.stage}] query {d.qid} {d.measure}: stored {d.stored} "
              f"recomputed {d.recomputed} — blame {d.blame}" + (f" ({d.detail})" if d.detail else ""))


def _print_not_drawn(missing: dict[str, str]) -> None:
    """Each figure that could not be drawn, with why."""
    for name, reason in missing.items():
        print(f"grainlab: {name}: not drawn: {reason}", file=sys.stderr)


def _replay() -> int:
    from grainlab.replay import replay

    bar, progress = _system_bar("verifying a sample of the stored rows")
    done = replay(progress=progress)
    bar.close()
    _print_findings(done.verified)
    _print_not_drawn(done.figures.missing)
    print(f"{len(done.figures.written)} figures redrawn from the stored tables into {settings.figures_dir()}")
    print(f"report written to {done.report}")
    for experiment, problems in done.aggregates.items():
        for problem in problems:
            print(f"grainlab: {experiment}/aggregate.csv: {problem}", file=sys.stderr)
    for table, problems in done.derived.items():
        for problem in problems[:5]:
            print(f"grainlab: {table}: {problem}", file=sys.stderr)
    for line in done.headlines:
        print(line)
    print(done.aggregates_line)
    print(done.derived_line)
    print(done.verify_line)
    if done.verified.rows == 0:
        raise ConfigError("no stored row could be recomputed here: the datasets are read from the mirror "
                          f"(set {settings.MIRROR_ENV}=/path/to/data or pass --mirror) or downloaded when online")
    tables_match = not any(done.aggregates.values()) and not any(done.derived.values())
    return 0 if done.verified.ok and not done.figures.missing and tables_match else 1


def cmd_pack(args: argparse.Namespace) -> int:
    from grainlab.packing import (
        COMMIT_LIMIT_BYTES,
        pack_archives,
        pack_large_tables,
        prune_plan,
        prune_superseded,
    )

    if args.dry_run and not args.prune:
        raise ConfigError("--dry-run shows what --prune would delete: pass both")
    limit = COMMIT_LIMIT_BYTES if args.limit is None else args.limit  # --limit 0 packs every table
    results = settings.results_dir()
    if args.prune:
        plan = prune_plan(results)  # raises, deleting nothing, when a manifest cannot prove what it keeps
        for path, why in plan.kept:
            print(f"kept {path}: {why}")
        if args.dry_run:
            for path in plan.delete:
                print(f"would remove {path} (superseded)")
            print(f"dry run: {len(plan.delete)} file(s) would be removed, {len(plan.kept)} unlisted kept")
            return 0
        for path in prune_superseded(results, plan):
            print(f"removed {path} (superseded)")
    for packed in [*pack_large_tables(results, limit=limit), *pack_archives(results)]:
        print(f"{packed} ({packed.stat().st_size:,} bytes)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from functools import partial

    from grainlab.data import load_dataset
    from grainlab.experiments.manifest import cpu_name
    from grainlab.experiments.verify import verify
    from grainlab.packing import unpack_archives
    from grainlab.studies.reader_checks import verify_readers

    if args.queries < 1:
        raise ConfigError(f"--queries must be at least 1, got {args.queries}")
    if args.reader_rows < 0 or args.regenerate < 0:
        raise ConfigError("--reader-rows and --regenerate count rows: give 0 or more")
    results = Path(args.results) if args.results else settings.results_dir()
    unpack_archives(results)  # the generation archives travel as .xz copies
    load = partial(load_dataset, allow_download=False)
    bar, progress = _system_bar("verify")
    report = verify(results, load, only=args.only, queries=args.queries, seed=args.seed, retrievers=args.retriever,
                    max_seconds=args.max_seconds, progress=progress, systems=args.systems)
    if args.reader_rows:
        report.merge(verify_readers(results, load, only=args.only, per_stratum=args.reader_rows,
                                    regenerate=args.regenerate, seed=args.seed, progress=progress))
    bar.close()
    _print_findings(report)
    print(f"{report.reproduced} of {report.rows} sampled rows reproduced on this machine (CPU {cpu_name()}; "
          f"{report.systems} systems, {report.generations} generations decoded again, {report.seconds:.0f} s)")
    if report.rows == 0:
        raise ConfigError("nothing was verified: no stored table matched --only/--retriever, or none is here")
    return 0 if report.ok else 1


def cmd_tables(args: argparse.Namespace) -> int:
    from functools import partial

    from grainlab.data import load_dataset
    from grainlab.studies.derived import derived_differences, write_superseded

    results = Path(args.results) if args.results else settings.results_dir()
    load = partial(load_dataset, allow_download=False)
    if args.write:
        written, refused = write_superseded(results, load, only=args.only, accept=args.accept)
        for path in written:
            print(f"rewritten: {path}")
        for table, problems in refused.items():
            print(f"grainlab: {table}: not rewritten, its values changed ({'; '.join(problems[:4])}): review "
                  f"`git diff` after `--accept {table}`, or re-run its notebook", file=sys.stderr)
        return 1 if refused else 0
    if args.accept:
        raise ConfigError("--accept rewrites tables: give it with --write")
    differences = derived_differences(results, load, only=args.only)
    for table, problems in differences.items():
        for problem in problems[:5]:
            print(f"DIFFERS: {table}: {problem}")
    matching = sum(not problems for problems in differences.values())
    print(f"{matching} of {len(differences)} derived tables rebuilt from their stored runs match the committed ones")
    if not differences:
        raise ConfigError("no study under the results folder rebuilds its derived tables: check --only and --results")
    return 0 if matching == len(differences) else 1


def cmd_figures(args: argparse.Namespace) -> int:
    import time

    from grainlab.figures import draw_all

    started = time.perf_counter()
    results = Path(args.results) if args.results else settings.results_dir()
    out = Path(args.out) if args.out else settings.figures_dir() / ("quick" if args.profile == "quick" else "")
    out.mkdir(parents=True, exist_ok=True)
    redrawn = draw_all(results, out, args.profile, args.only or ())
    _print_not_drawn(redrawn.missing)
    print(f"{len(redrawn.written)} figures drawn from {results} ({args.profile} profile) into {out} in "
          f"{time.perf_counter() - started:.0f} s")
    return 1 if redrawn.missing else 0


def cmd_report(args: argparse.Namespace) -> int:
    from grainlab.publish import study_sections, write_report

    html_path, markdown_path = write_report(args.profile, Path(args.out) if args.out else None)
    for section in study_sections(args.profile):
        for problem in section.figure_problems:
            print(f"grainlab: WARNING: {section.notebook}: {problem}", file=sys.stderr)
    print(f"report written to {html_path} and {markdown_path}")
    for readme in args.readme or ():
        from grainlab.publish import update_readme

        changed = update_readme(Path(readme), args.profile)
        print(f"{readme}: generated blocks {'updated' if changed else 'already current'}")
    return 0


def _check_compare_arguments(args: argparse.Namespace) -> dict[str, str]:
    """The candidates, after every cheap check: numbers in range, every chunker and retriever spec
    valid — before a document is read or a model loaded, and before anything is written."""
    from grainlab.retrieval import retriever_parameters
    from grainlab.studies import your_documents as yd

    if args.k < 1:
        raise ConfigError(f"--k is how many units a question is shown: at least 1, got {args.k}")
    if args.price_per_mtok < 0:
        raise ConfigError(f"--price-per-mtok is a price: at least 0, got {args.price_per_mtok}")
    if not 0 < args.tune_share < 1:
        raise ConfigError(f"--tune-share is the share of questions that pick a candidate: between 0 and 1, "
                          f"got {args.tune_share}")
    candidates = yd.parse_candidates(args.chunkers)
    for spec in [*(args.retriever or []), *([args.side_by_side] if args.side_by_side else [])]:
        retriever_parameters(spec)
    earlier = [name for name in ("retrievers.csv", "side_by_side") if (Path(args.out) / name).exists()]
    if earlier and not args.side_by_side:
        raise ConfigError(f"{args.out} holds an earlier run's side-by-side comparison ({', '.join(earlier)}), which "
                          "would sit beside this decision unrelated to it: choose a new --out, pass --side-by-side "
                          "again, or remove them")
    return candidates


def cmd_compare(args: argparse.Namespace) -> int:
    from grainlab.studies import your_documents as yd

    _check_compare_arguments(args)
    inputs = yd.load_inputs(args.documents, args.questions, keep_unlocated=args.keep_unlocated, mirror=args.mirror,
                            exclude=[args.out])
    comparison = yd.compare(inputs, yd.parse_candidates(args.chunkers), args.retriever,
                            reranker=args.reranker, k=args.k, tune_share=args.tune_share,
                            price_per_mtok=args.price_per_mtok, accept=args.accept, threshold=args.threshold,
                            out=args.out, seed=args.seed, language=args.language)
    from grainlab.figures.your_documents import report_with_figures

    report_with_figures(args.out)
    print(yd.decision_view(comparison.decision, args.k, comparison.criteria).to_string(index=False))
    print(f"(model loading: {comparison.info['load_seconds']:.1f} s, charged to no candidate)")
    failures = yd.failure_counts(comparison.failures)
    print("\nfailures by stage: " + ("none" if failures.empty else f"\n{failures.to_string(index=False)}"))
    print(f"\n{comparison.recommendation}\n\nwritten to {args.out} (decision.csv, failures.csv, report.html, ...)")
    if args.side_by_side:
        from grainlab.files import atomic_write_text

        first = comparison.info["retriever"]
        other = yd.compare(inputs, yd.parse_candidates(args.chunkers), args.side_by_side, reranker=args.reranker,
                           k=args.k, tune_share=args.tune_share, price_per_mtok=args.price_per_mtok,
                           accept=args.accept, threshold=args.threshold, out=Path(args.out) / "side_by_side",
                           seed=args.seed, language=args.language)
        contrast = yd.retriever_contrast({first: comparison, args.side_by_side: other}, inputs.dataset, args.k,
                                         seed=args.seed)
        atomic_write_text(Path(args.out) / "retrievers.csv", contrast.to_csv(index=False))
        print(f"\n{first} vs {args.side_by_side} on the same questions (retrievers.csv):\n"
              + contrast.drop(columns=["versus", "language", "cluster"]).to_string(
                  index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def _check_generative(model_id: str) -> None:
    """A clear error for a reader named by an embedding model or a cross-encoder, which cannot write."""
    from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id
    from grainlab.models.encoders import PRESETS

    lowered = model_id.lower()
    if model_id in PRESETS or gguf_model_id(model_id) in GGUF_EMBEDDERS or lowered.startswith(
            ("sentence-transformers/", "cross-encoder/")) or "embed" in lowered:
        raise ConfigError(f"--reader {model_id!r} is an embedding or ranking model, which cannot write questions: "
                          "name a generative model, e.g. Qwen/Qwen2.5-Coder-1.5B-Instruct")


def cmd_questions(args: argparse.Namespace) -> int:
    from grainlab.data.documents import load_documents
    from grainlab.data.evidence import question_record
    from grainlab.readers import get_reader
    from grainlab.studies.question_generation import MAX_NEW_TOKENS, generate_questions

    _check_generative(args.reader)
    documents = load_documents(args.documents)
    reader = get_reader(args.reader, "auto", max_new_tokens=MAX_NEW_TOKENS, stop_at_newline=False)
    questions, report = generate_questions(documents, reader, n=args.n, seed=args.seed, language=args.language,
                                           passages=args.passages)
    by_key = {d.key: d for d in documents}
    from grainlab.files import atomic_write_text

    atomic_write_text(Path(args.out), "".join(json.dumps(question_record(q, by_key), ensure_ascii=False) + "\n"
                                              for q in questions))
    print(f"{report.kept} of {report.asked} passages gave a question with verbatim evidence "
          f"(yield {report.share:.0%}; dropped: {report.dropped}); written to {args.out}")
    return 0


def cmd_tokens(args: argparse.Namespace) -> int:
    from grainlab.data.documents import load_documents
    from grainlab.models.tokenizers import get_tokenizer
    from grainlab.studies.token_accounting import (
        PROJECT_TOKENIZERS,
        chars_per_token,
        reference_texts,
    )

    bad = [size for size in args.sizes if size < 1]
    if bad:
        raise ConfigError(f"--sizes are token counts: each at least 1, got {bad}")
    for name in args.tokenizer or []:
        if "/" not in name:
            get_tokenizer(name)  # a misspelt encoding is named before any text is read
    if args.documents:
        texts = {args.documents: [d.text for d in load_documents(args.documents)]}
    else:
        mirror = settings.mirror_dir(args.mirror)
        if mirror is None:
            raise ConfigError("the reference texts are read from the dataset mirror: pass --mirror or set "
                              f"${settings.MIRROR_ENV} (or name your own documents)")
        texts = reference_texts(mirror)
    tokenizers = {name: name for name in args.tokenizer} if args.tokenizer else PROJECT_TOKENIZERS
    table = chars_per_token(texts, tokenizers, sizes=args.sizes)
    if args.out:
        from grainlab.files import atomic_write_text

        atomic_write_text(Path(args.out), table.to_csv(index=False))
    shown = ["texts", "language", "tokenizer", "characters", "tokens", "chars_per_token",
             *(f"chars_in_{size}_tokens" for size in args.sizes)]
    print(table[shown].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
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
    p.add_argument("--dataset", required=True, help="a registered name (grainlab datasets), a BEIR folder by path, or an ir_datasets id "
                        "(irds:beir/scifact/test)")
    p.add_argument("run_file", help="a TREC run file (qid Q0 docid rank score tag), plain or .gz")
    p.add_argument("--measures", nargs="+", default=["nDCG@10", "R@100"])
    p.add_argument("--split", default="test")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 3 (instead of warning) when the run does not fit the dataset: queries the "
                        "qrels do not judge, judged queries it does not answer, queries without a positive judgment, "
                        "no shared query or document")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("reproduce", parents=[common], help="run the notebooks through papermill")
    p.add_argument("--profile", choices=["quick", "full"], default="quick")
    p.add_argument("--only", nargs="+", help="notebook names (default: all)")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="inject a notebook parameter (VALUE read as JSON when it parses), repeatable")
    p.add_argument("--ray", nargs="?", const="auto", metavar="ADDRESS",
                   help="encode corpora and run each experiment's systems on Ray: no ADDRESS uses $RAY_ADDRESS or "
                        "starts a local cluster, 'local' always starts one (sets $GRAINLAB_RAY for the notebooks)")
    p.add_argument("--stored", action="store_true",
                   help="the main job: no notebook runs; restore the committed full-profile tables, recompute a "
                        "seeded sample of their rows (grainlab verify), rebuild the report, print each paper's "
                        "verdicts and how many sampled rows reproduced on this machine")
    p.add_argument("--allow-dirty", action="store_true",
                   help="run the full profile although the code has uncommitted changes (refused otherwise: "
                        "committed results must come from committed code)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("pack-results", parents=[common],
                       help="write an .xz copy of every per-query table over the commit size limit and of every "
                            "generation archive (committed in their place; every notebook's first cell "
                            "restores them)")
    p.add_argument("--limit", type=int, help="bytes (default: 1 MiB)")
    p.add_argument("--prune", action="store_true",
                   help="first delete per-query tables and runs proven superseded: their experiment's manifest "
                        "records that a system's current table replaced them, and that table passes its checksum; "
                        "every other unlisted file is kept and named; a manifest that proves nothing refuses")
    p.add_argument("--dry-run", action="store_true", help="with --prune: print what would be deleted, delete nothing")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser("verify", parents=[common],
                       help="recompute a seeded sample of the stored per-query rows from raw data and models and "
                            "compare them with the stored ones (exit 1 when any differs)")
    p.add_argument("--only", nargs="*", default=[], metavar="PREFIX",
                   help="experiment folders under results/ to check (prefixes, e.g. chunk_size/full/scifact)")
    p.add_argument("--queries", type=int, default=3, help="queries sampled per system (default 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--retriever", nargs="*", default=[], metavar="NAME",
                   help="only systems whose retrievers (and reranker, named 'rerank') are all of these kinds "
                        "(e.g. bm25: no model loads)")
    p.add_argument("--systems", type=int, help="systems drawn at random per experiment (default: all)")
    p.add_argument("--max-seconds", type=float, help="start no new experiment after this many seconds")
    p.add_argument("--reader-rows", type=int, default=2, metavar="N",
                   help="reader rows (a study's stored predictions) sampled per reader and setting, each rebuilt "
                        "from its prompt and checked against the generation archive; 0: none (default 2)")
    p.add_argument("--regenerate", type=int, default=1, metavar="N",
                   help="of those, rows decoded again by their reader and compared with the archived text "
                        "(default 1 per run)")
    p.add_argument("--results", help="results folder (default $GRAINLAB_RESULTS or results/)")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("tables", parents=[common],
                       help="rebuild each study's derived tables (positions, contrasts, verdicts) from its stored "
                            "runs and compare them with the committed files (exit 1 when any differs)")
    p.add_argument("--only", nargs="*", default=[], metavar="PREFIX",
                   help="study runs under results/ (prefixes, e.g. lost_in_the_middle/full)")
    p.add_argument("--write", action="store_true",
                   help="rewrite a committed table only where the rebuilt one proves it superseded (every committed "
                        "value the same, columns added); any other difference is refused and named")
    p.add_argument("--accept", nargs="*", default=[], metavar="PREFIX",
                   help="with --write: also rewrite these tables (prefixes, e.g. hybrid_rerank/full/verdicts.csv) "
                        "although their values changed, after reviewing the change")
    p.add_argument("--results", help="results folder (default $GRAINLAB_RESULTS or results/)")
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("figures", parents=[common],
                       help="redraw every registered figure from the stored tables under results/ (no notebook runs, "
                            "no model loads); exit 1 when a figure's tables are missing")
    p.add_argument("--profile", choices=["quick", "full"], default="full")
    p.add_argument("--only", nargs="+", metavar="STUDY", help="studies to draw (default: all), e.g. chunk_size")
    p.add_argument("--results", help="results folder (default $GRAINLAB_RESULTS or results/)")
    p.add_argument("--out", help="figures folder (default figures/, figures/quick/ for the quick profile)")
    p.set_defaults(func=cmd_figures)

    p = sub.add_parser("report", parents=[common], help="one self-contained HTML report (and Markdown) from results/")
    p.add_argument("--profile", choices=["quick", "full"], default="full")
    p.add_argument("--out", help="HTML file to write (default: results/report.html; the .md beside it)")
    p.add_argument("--readme", nargs="+", metavar="FILE",
                   help="also rewrite the generated blocks (verdicts, papers table) of these Markdown files, "
                        "e.g. README.md docs/results.md")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", parents=[common],
                       help="the chunking decision on your own documents and questions (gold evidence spans)")
    p.add_argument("documents", help="a folder of .md/.txt/.html/.pdf, a documents.jsonl, a BEIR folder or a "
                                     "registered dataset with gold spans (e.g. chroma_chunking_eval)")
    p.add_argument("questions", nargs="?", help="questions.jsonl: id, question, document_id, start/end or answer "
                                                "(make one with `grainlab questions`)")
    p.add_argument("--chunkers", nargs="+", metavar="[LABEL=]SPEC",
                   help="candidate chunkers (default: fixed 256/32, fixed 512/64, structure 800, parent_child 256→1200)")
    p.add_argument("--retriever", nargs="+", metavar="SPEC",
                   help="one retriever spec, or several fused by RRF (default: all-MiniLM-L6-v2)")
    p.add_argument("--reranker", help="a cross-encoder's Hugging Face id to rerank with")
    p.add_argument("--k", type=int, default=5, help="units shown per question (default 5)")
    p.add_argument("--tune-share", type=float, default=0.2, help="share of questions that pick (default 0.2)")
    p.add_argument("--price-per-mtok", type=float, default=0.02, help="embedding price per million tokens")
    p.add_argument("--accept", default="hit@{k}>=0.92,boundary_retention>=0.9,mean_tokens<=3000",
                   help="acceptance criteria, comma-separated column>=value")
    p.add_argument("--threshold", type=float,
                   help="score above which an unanswerable question counts as a false retrieval "
                        "(default: picked on the tuning split)")
    p.add_argument("--keep-unlocated", action="store_true",
                   help="keep questions whose answer string is not in the text, as source/extraction failures")
    p.add_argument("--language", choices=["auto", "en", "ja"], default="auto",
                   help="the documents' language: picks the default retriever and is stated in every table "
                        "(default: detected from their script)")
    p.add_argument("--side-by-side", metavar="SPEC",
                   help="a second retriever run on the same candidates and questions (under OUT/side_by_side/), "
                        "compared with the first per chunker in OUT/retrievers.csv (e.g. whitespace bm25 beside "
                        "bm25(language=ja))")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="folder for decision.csv, failures.csv, chunks.jsonl, report.html")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("questions", parents=[common],
                       help="generate span-labelled questions from your documents with a local reader")
    p.add_argument("documents", help="a folder of .md/.txt/.html/.pdf or a documents.jsonl")
    p.add_argument("--out", required=True, help="questions.jsonl to write (every line marked generated)")
    p.add_argument("--n", type=int, default=100, help="passages to ask about (default 100)")
    p.add_argument("--reader", default="Qwen/Qwen2.5-Coder-1.5B-Instruct", help="the reader's Hugging Face id")
    p.add_argument("--passages", default="structure(size=300)",
                   help="chunker spec cutting the passages asked about (default structure(size=300); "
                        "Japanese text holds ~1.35 characters per cl100k token (`grainlab tokens`), so size=150 gives passages of ~200 characters)")
    p.add_argument("--language", choices=["auto", "en", "ja"], default="auto",
                   help="the documents' language (default: detected from their script)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_questions)

    p = sub.add_parser("tokens", parents=[common],
                       help="characters per token of your documents in every tokenizer grainlab uses")
    p.add_argument("documents", nargs="?", help="a folder of .md/.txt/.html/.pdf, a glob or a documents.jsonl "
                                                "(default: the project's Japanese and English reference texts)")
    p.add_argument("--tokenizer", nargs="+", metavar="NAME", help="tokenizers (tiktoken names or Hugging Face ids; "
                                                                  "default: every tokenizer the project uses)")
    p.add_argument("--sizes", nargs="+", type=int, default=[256, 512], help="token sizes to translate into characters")
    p.add_argument("--out", help="CSV to write the table to")
    p.set_defaults(func=cmd_tokens)
    return parser


def _terminate(signum, frame):  # SIGTERM unwinds like Ctrl-C, so partial outputs are removed
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    import signal

    args = build_parser().parse_args(argv)
    if argv is None:
        signal.signal(signal.SIGTERM, _terminate)
    if getattr(args, "mirror", None):
        os.environ[settings.MIRROR_ENV] = os.path.abspath(args.mirror)
    try:
        status = args.func(args)
        sys.stdout.flush()
        return status
    except GrainlabError as exc:
        print(f"grainlab: error: {exc}", file=sys.stderr)
        return 2
    except PermissionError as exc:
        print(f"grainlab: error: {exc.filename or ''}: not writable ({exc.strerror}); choose another folder "
              "(--out, $GRAINLAB_CACHE, $GRAINLAB_RESULTS) or fix its permissions", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `grainlab datasets | head -1`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("grainlab: interrupted; finished results are kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
