"""``evaltool judge POOL_OR_TASK --llm URL --model NAME --set SET``: a language model grades the pairs
(it drives :mod:`evaltool.judgments.llm`)."""

from __future__ import annotations

import json
import os
import sys

import click

from evaltool.cli.common import emit, fail, option_group, output_options, warn
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError

JUDGE_HELP = """A language model grades (query, document) pairs through an OpenAI-compatible
chat-completions endpoint (Ollama, vLLM, llama.cpp, a hosted service); the grades become
judgments of SET by the rater llm:MODEL, with the prompt's hash in each note.

\b
  evaltool judge pool.txt --llm http://127.0.0.1:11434/v1 --model qwen2.5:7b --set dl19-llm \\
      --topics topics.tsv --corpus corpus.jsonl --cache .llm-cache
  evaltool judge 3 --llm http://127.0.0.1:11434/v1 --model qwen2.5:7b --set helpdesk --only-unjudged
  EVALTOOL_LLM_API_KEY=... evaltool judge pool.txt --llm https://api.example.com/v1 --model m \\
      --set s --topics t.tsv --corpus c.jsonl --max-calls 500 --max-tokens 400000
  evaltool judge pool.txt ... --resume          # after Ctrl-C, a crash or a spent budget

POOL_OR_TASK is a pool file ('query_id doc_id' lines, as 'evaltool pool' writes it) or the
number of a judging task in --db. Query texts come from --topics (else the task), document
texts from --corpus (else the title and snippet the task kept). Every document text is sent
to the endpoint: a hosted one receives your corpus. The key, if any, is read from the
environment variable --api-key-env names, and is never written or printed.

Every pair ends judged, unparsed (the model did not answer with one grade of the scale; kept
with its answer, never guessed) or failed (with the reason); each settled pair is appended
to a checkpoint at once, and --resume sends only the pairs it lacks. Exit 0 when every pair
is judged, 1 when some are unparsed, failed or left by a spent budget, 2 on bad input, 130
on Ctrl-C.
"""


@click.command("judge", help=JUDGE_HELP)
@option_group(
    click.argument("source", metavar="POOL_OR_TASK"),
    click.option(
        "--llm",
        "url",
        required=True,
        metavar="URL",
        help="The endpoint's base URL (…/v1) or its /chat/completions address.",
    ),
    click.option("--model", required=True, metavar="NAME", help="The model, as the endpoint names it."),
    click.option(
        "--set",
        "set_name",
        required=True,
        metavar="SET",
        help="The judgment set the grades go to (made on --scale when new).",
    ),
    db_option,
    click.option(
        "--corpus",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help='Document texts: JSONL of {"id", "title", "text"}.',
    ),
    click.option(
        "--topics",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="Query texts (text / query / title), with description and narrative when given: "
        "TSV, JSON or JSONL with a query id.",
    ),
    click.option(
        "--prompt",
        "prompt_file",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="A prompt of your own, with {query} and {text} (and {title}, {description}, "
        "{narrative}, {grades}); default: evaltool's.",
    ),
    click.option(
        "--scale",
        default="graded",
        show_default=True,
        help="The scale of a new set: binary, graded or labels:NAME=GRADE,...",
    ),
    click.option(
        "--api-key-env",
        default="EVALTOOL_LLM_API_KEY",
        show_default=True,
        metavar="NAME",
        help="The environment variable holding the endpoint's key (sent as a Bearer token).",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1, max=64),
        default=4,
        show_default=True,
        help="Requests in flight at once.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=60.0,
        show_default=True,
        help="Seconds a pair may take, retries included; then it fails as 'timeout'.",
    ),
    click.option(
        "--retries",
        type=click.IntRange(min=0),
        default=3,
        show_default=True,
        help="Retries of a transient failure (HTTP 429/5xx, a dropped connection, a broken answer).",
    ),
    click.option(
        "--max-calls",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Send at most N requests (retries count); the rest waits for --resume.",
    ),
    click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Stop sending once the endpoint reports N tokens used.",
    ),
    click.option(
        "--cache",
        "cache_dir",
        type=click.Path(file_okay=False),
        default=None,
        metavar="DIR",
        help="Keep every answer here; a pair asked again (same endpoint, model, prompt, texts) costs nothing.",
    ),
    click.option(
        "--checkpoint",
        "checkpoint_path",
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help="The checkpoint (default: judge-SET.checkpoint.jsonl in --cache, else here).",
    ),
    click.option("--resume", is_flag=True, help="Finish an interrupted run from its checkpoint."),
    click.option("--restart", is_flag=True, help="Discard an unfinished run's checkpoint and start over."),
    click.option("--only-unjudged", is_flag=True, help="Leave out the pairs SET holds a grade of (by anyone)."),
    output_options(["table", "json"], "table"),
)
def judge_command(
    source,
    url,
    model,
    set_name,
    db,
    corpus,
    topics,
    prompt_file,
    scale,
    api_key_env,
    concurrency,
    timeout,
    retries,
    max_calls,
    max_tokens,
    cache_dir,
    checkpoint_path,
    resume,
    restart,
    only_unjudged,
    fmt,
    output,
):
    from evaltool.bench.checkpoint import checkpoint_path as named_checkpoint
    from evaltool.bench.execute import Interrupted
    from evaltool.cli.progress import Progress
    from evaltool.judgments.llm import ChatEndpoint, JudgeSettings, judge_pairs, pairs_to_judge, save_judgments
    from evaltool.judgments.prompting import DEFAULT_PROMPT, read_prompt

    try:
        if resume and restart:
            raise EvaltoolError("--resume and --restart exclude each other")
        judgment_set = _the_set(db, set_name, scale)
        pairs, left_out = pairs_to_judge(
            source, db=db, corpus=corpus, topics=topics, set_name=set_name, only_unjudged=only_unjudged
        )
        endpoint = ChatEndpoint(url, model, api_key=os.environ.get(api_key_env) or None, concurrency=concurrency)
        settings = JudgeSettings(
            endpoint=endpoint,
            prompt=read_prompt(prompt_file) if prompt_file else DEFAULT_PROMPT,
            scale=judgment_set.scale,
            set_name=set_name,
            checkpoint_path=checkpoint_path or named_checkpoint(cache_dir or ".", "", f"judge-{set_name}"),
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            max_calls=max_calls,
            max_tokens=max_tokens,
            cache_dir=cache_dir,
            resume=resume,
            restart=restart,
        )
        if left_out:
            warn(f"judge: {left_out} pairs {set_name} holds a grade of were left out (--only-unjudged)")
        progress = Progress(sys.stderr, len(pairs), label="judging ")
        try:
            run = judge_pairs(pairs, settings, on_outcome=lambda o: progress.advance(o.status != "judged"))
        except Interrupted as stop:
            progress.clear()
            click.echo(
                f"evaltool: interrupted ({stop.signal_name}) after {progress.done} of {len(pairs)} pairs; "
                f"the settled ones are in {settings.checkpoint_path}: run the same command with --resume "
                "to finish",
                err=True,
            )
            sys.exit(128 + stop.signum)
        progress.clear()
        save_judgments(db, run, settings)
    except EvaltoolError as exc:
        fail(exc)
    summary = {"set": set_name, "rater": settings.rater, "prompt_sha256": settings.prompt_sha256, **run.to_dict()}
    emit(json.dumps(summary, indent=2, ensure_ascii=False) + "\n" if fmt == "json" else _table(summary), output)
    if run.pending:
        warn(
            f"judge: {len(run.pending)} pairs not sent ({run.budget_spent} reached); they wait in "
            f"{run.checkpoint_path}: run the same command with --resume (and a new budget) to finish"
        )
    sys.exit(0 if summary["judged"] == summary["pairs"] else 1)


def _the_set(db, name: str, scale: str):
    from evaltool.errors import HistoryError
    from evaltool.judgments.sets import create_set, get_set

    try:
        return get_set(db, name)
    except HistoryError:  # no such set, or no history yet: both are made
        return create_set(db, name, scale, description="judgments of a language model (evaltool judge)")


def _table(summary: dict) -> str:
    lines = [
        f"set {summary['set']} (version {summary['set_version']}), rater {summary['rater']}, "
        f"prompt sha256:{summary['prompt_sha256'][:16]}",
        f"pairs {summary['pairs']}: judged {summary['judged']}, unparsed {summary['unparsed']}, "
        f"failed {summary['failed']}, not sent {summary['pending']}",
        f"requests {summary['calls']}, tokens {summary['tokens']}, answers from the cache {summary['cached']}, "
        f"{summary['seconds']:.1f} s",
    ]
    for entry in summary["not_judged"]:
        shown = f" — answer: {entry['answer'][:120]!r}" if entry.get("answer") else ""
        lines.append(f"  {entry['status']:<8} {entry['query_id']} {entry['doc_id']}: {entry['reason']}{shown}")
    return "\n".join(lines) + "\n"
