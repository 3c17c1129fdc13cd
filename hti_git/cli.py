"""The `hti-git` command: parse, call one library function, render. All printing lives here."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from hti_git import __version__
from hti_git.errors import HtiError, OptionError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _Command(click.Command):
    """Options the library refuses together read as the parser's own usage errors, with the hint."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OptionError as exc:
            raise click.UsageError(str(exc), ctx) from None


class _Group(click.Group):
    """Turns library errors into one-line messages and exit codes: no tracebacks for users."""

    command_class = _Command
    group_class = type  # subgroups (cache, schema) are _Groups too, so their commands are _Commands

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:  # a bad option before the command name: `hti-git --bogus`
            _usage_error(exc)
            raise click.exceptions.Exit(exc.exit_code) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # the parser's, or a command's own, usage errors
            _usage_error(exc)
            ctx.exit(exc.exit_code)
        except HtiError as exc:
            click.echo(f"hti-git: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("hti-git: interrupted; nothing was committed", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            sys.stderr.close()
            ctx.exit(1)


def _usage_error(exc: click.UsageError) -> None:
    """A usage error as one line, as every other error is, with where to read the usage.

    Click's own rendering takes three lines (usage, "Try ... for help", the error); the usage line
    is what --help is for.
    """
    message = " ".join(exc.format_message().split()).rstrip(".")
    message = message[:1].lower() + message[1:]
    names, ctx = [], exc.ctx
    while ctx is not None and ctx.parent is not None:  # the root is hti-git, whatever it was invoked as
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    where = " ".join(["hti-git", *names])
    click.echo(f"hti-git: error: {message} (see '{where} --help')", err=True)


def _nearest_read(answer, k: int = 3) -> list[tuple[str, str]]:
    """The first `k` distinct pages a `fast` search read, best first, with their trace notes (title and
    the share of the question each covers): where to look when it says "not found"."""
    out: dict[str, str] = {}
    for step in answer.trace:
        if step.action == "read" and step.page not in out and len(out) < k:
            out[step.page] = step.note
    return list(out.items())


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


def _repo(ctx: click.Context):
    from hti_git.workspace import open_index

    repo, settings = open_index(ctx.obj["dir"])
    ctx.call_on_close(repo.close)
    return repo, settings


@click.group(cls=_Group, context_settings=CONTEXT)
@click.option("-C", "directory", default=".", metavar="DIR", type=click.Path(file_okay=False),
              help="Run as if hti-git was started in DIR (like git -C).")
@click.version_option(__version__, prog_name="hti-git")
@click.pass_context
def main(ctx: click.Context, directory: str) -> None:
    """Compile long documents once into a hierarchical plain-text index kept in Git,
    then answer questions by navigating it.

    \b
    Quick start:
      hti-git init idx && cd idx
      hti-git compile contract.pdf
      hti-git ask "Which state's law governs this agreement?"
    """
    ctx.ensure_object(dict)
    if not Path(directory).is_dir():
        from hti_git.errors import UsageError

        reason = "not a directory" if Path(directory).exists() else "no such directory"
        raise UsageError(f"-C {directory}: {reason}")
    ctx.obj["dir"] = directory


@main.command(context_settings=CONTEXT)
@click.argument("directory", default=".", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def init(ctx: click.Context, directory: str, as_json: bool) -> None:
    """Create (or adopt) an index repository in DIRECTORY.

    Writes hti.yaml (commented settings), templates/, .gitattributes and .gitignore (which ignores
    eval-out/, the default output of `hti-git eval`) and commits them.
    Running it again changes nothing.

    \b
    Example:
      hti-git init contracts-index
    """
    from hti_git.workspace import init_index

    target = Path(ctx.obj["dir"]) / directory
    result = init_index(target)
    if as_json:
        _emit_json(result)
        return
    verb = "Initialised new" if result["created_repository"] else "Adopted existing"
    click.echo(f"{verb} index repository in {result['path']}")
    if result["commit"]:
        click.echo(f"Committed {len(result['added'])} file(s) on {result['branch']}: {result['commit'][:10]}")
    else:
        click.echo("Nothing to do: hti.yaml, templates/, .gitattributes and .gitignore are already committed.")


@main.command(context_settings=CONTEXT)
@click.argument("inputs", nargs=-1, required=True)
@click.option("--method", type=click.Choice(["auto", "fast", "standard"]), default=None,
              help="Compile method (default from hti.yaml: auto = standard with a model, else fast).")
@click.option("--doc", "doc_name", default=None, help="Index folder name (default: from the file name).")
@click.option("--branch", default=None, help="Commit to this branch instead of the current one.")
@click.option("--in-place", is_flag=True, help="A recompile under new settings commits on the current branch.")
@click.option("--replace", is_flag=True,
              help="Let a different source file replace the document of the same name (refused without it).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="At most N model calls in flight, and up to N documents at once (default: "
                   "`concurrency` from hti.yaml, 8, with documents one at a time).")
@click.option("--one-commit", is_flag=True, help="One commit for all documents instead of one each.")
@click.option("--all", "include_all", is_flag=True,
              help="Also compile a folder's README*, LICENSE* and CHANGELOG* files (skipped by default).")
@click.option("--model", default=None, help="Model for the standard method (overrides hti.yaml and HTI_MODEL).")
@click.option("--schema", "schema_file", default=None, type=click.Path(dir_okay=False, exists=True),
              help="Use this reviewed schema (YAML, e.g. from `schema discover`) instead of discovering one.")
@click.option("--estimate", is_flag=True, help="Print the model calls and tokens a compile would spend; call nothing.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Stop a document's compile before it spends more tokens (nothing is committed for it).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the model response cache.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where documents are built: here, or on a Ray cluster (pip install 'hti-git[ray]'); "
                   "this process still reads the sources and makes the commits.")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="The Ray cluster to join (as ray.init(address=...)); default: a local Ray instance.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON (a list, one per document).")
@click.pass_context
def compile(ctx: click.Context, inputs: tuple[str, ...], method: str | None, doc_name: str | None,
            branch: str | None, in_place: bool, replace: bool, jobs: int | None, one_commit: bool,
            include_all: bool, model: str | None,
            schema_file: str | None, estimate: bool, max_tokens: int | None, no_cache: bool,
            executor: str, ray_address: str | None, as_json: bool) -> None:
    """Compile documents into the index and commit each one.

    INPUTS are files (.txt .md .pdf .html .docx), folders (searched recursively) or quoted glob
    patterns. Each document becomes a folder <doc>/ with index.md (root summary), category pages,
    subject pages and source.txt, committed on its own (or all together with --one-commit).
    Re-running with unchanged input commits nothing; a recompile under a different method, model or
    schema lands on a branch hti/<doc>/<label>. A different file whose name gives an existing
    document's folder is refused: name it with --doc NAME, or replace the document with --replace.
    In folders, README*, LICENSE* and CHANGELOG* files are skipped with a note (--all includes them).
    One bad file does not stop the others; each document's line is printed as it finishes, and the
    exit code is non-zero if any failed.

    With a model configured (HTI_MODEL, OPENAI_API_KEY or OPENAI_BASE_URL) the standard method runs:
    discover a schema (or use --schema), extract subjects per chunk, merge, summarize. Its model
    calls go through the response cache, so re-running after an interruption, or after editing one
    paragraph, pays only for what changed.

    \b
    Example:
      hti-git compile contract.pdf
      hti-git compile a.pdf b.docx contracts/ 'filings/*.html' -j 4 --json
      hti-git compile contract.pdf --model gpt-5-mini --estimate
      hti-git compile contracts/ --schema schema.yaml --max-tokens 200000
      hti-git compile contracts/ --executor ray --ray-address auto -j 32
    """
    from hti_git.compile.batch import CompileRequest, run_compile

    repo, settings = _repo(ctx)
    if ray_address and executor != "ray":
        raise click.UsageError("--ray-address goes with --executor ray")
    if executor == "ray" and not estimate:
        from hti_git.compile.distributed import require_ray

        require_ray()  # before any work: a one-line error when Ray is not installed
    request = CompileRequest(list(inputs), method=method, doc=doc_name, branch=branch, in_place=in_place,
                             replace=replace, jobs=jobs, one_commit=one_commit, include_all=include_all,
                             model=model, schema_file=schema_file, max_tokens=max_tokens, no_cache=no_cache)
    plan = request.resolve(settings)
    if estimate:
        from hti_git.compile.preview import estimate_inputs

        rows = estimate_inputs(repo, plan)
        if as_json:
            _emit_json(rows)
        else:
            for row in rows:
                click.echo(_estimate_line(row))
        return
    if plan.fast_because and not as_json:
        click.echo(f"Compiling with the offline 'fast' method; for 'standard': {plan.fast_because}.", err=True)
    single = request.one_file
    terminal = not as_json and sys.stderr.isatty()
    show_bar, show_stage = terminal and not single, terminal and single
    width = shutil.get_terminal_size((100, 20)).columns - 1
    counts = {"total": 0, "done": 0}

    def draw_bar() -> None:
        # one status line on stderr, cleared before each result line so the two never run together
        if show_bar and counts["done"] < counts["total"]:
            click.echo(f"\r\033[Kcompiling: {counts['done']} of {counts['total']} document(s) done", nl=False,
                       err=True)

    def clear_line() -> None:
        if show_bar or show_stage:
            click.echo("\r\033[K", nl=False, err=True)

    def on_progress(message: str) -> None:
        click.echo(f"\r\033[K{message[:width]}", nl=False, err=True)

    def on_start(total: int, skipped: list[dict[str, str]]) -> None:
        counts["total"] = total
        if not as_json:
            for s in skipped:
                click.echo(f"skipped    {s['source']}: {s['reason']}", err=True)
        draw_bar()

    def on_done(result, failure) -> None:
        counts["done"] += 1
        if as_json:
            return
        clear_line()
        if failure is not None:
            prefix = "hti-git: error: " if single else "failed     "
            click.echo(f"{prefix}{failure['error']}", err=True)
        else:
            click.echo(_compile_line(result))
            if result.method == "standard":
                for warning in result.warnings[:5]:
                    click.echo(f"  note: {warning}", err=True)
                if len(result.warnings) > 5:
                    click.echo(f"  note: ... and {len(result.warnings) - 5} more (see --json)", err=True)
            if result.status == "branch":
                click.echo(f"  review it: hti-git diff {repo.current_branch() or 'HEAD'} {result.branch}")
        draw_bar()

    try:
        batch = run_compile(repo, plan, on_start=on_start, on_done=on_done,
                            progress=on_progress if show_stage else None, executor=executor,
                            ray_address=ray_address)
    finally:
        clear_line()
    if as_json:
        _emit_json(batch.to_list())
    if batch.failures:
        if not single and not as_json:  # each failure was printed once, as it happened
            click.echo(f"{len(batch.failures)} of {batch.total} document(s) failed (see the 'failed' lines above)",
                       err=True)
        ctx.exit(1)


def _compile_line(r) -> str:
    if r.status == "unchanged":
        where = f" on {r.branch}" if r.branch else ""
        return f"unchanged  {r.doc} (same source and settings{where}; nothing to commit)"
    where = f"{r.branch}@{r.commit[:10]}"
    cost = ""
    if r.method == "standard":
        u = r.usage
        cost = (f", {u.get('calls', 0)} calls ({u.get('cached_calls', 0)} cached), "
                f"{u.get('input_tokens', 0):,} in / {u.get('output_tokens', 0):,} out tokens")
    from hti_git.index.plural import counted

    return (f"{'committed' if r.status == 'committed' else 'branch':<10} {r.doc}: {counted(r.pages, 'pages')}, "
            f"{counted(r.subjects, 'subjects')}, {r.method}{cost}, {r.seconds:.2f}s -> {where}")


def _estimate_line(row: dict) -> str:
    if "error" in row:
        return f"failed     {row['error']}"
    if row["method"] != "standard":
        return f"estimate   {row['doc']}: {row['method']}, no model calls"
    cached = f" ({row['cached_calls']} more from the cache)" if row["cached_calls"] else ""
    if row.get("unchanged"):
        return f"estimate   {row['doc']}: unchanged, no model calls"
    return (f"estimate   {row['doc']}: {row['calls']} model calls{cached}, ~{row['input_tokens']:,} input tokens "
            f"({row['ratio']:.2f}x the document's {row['document_tokens']:,}), ~{row['output_tokens']:,} output tokens "
            f"({row['output_ratio']:.2f}x); {row['chunks']} chunk(s) of ~{row['chunk_chars']:,} characters")


@main.command(context_settings=CONTEXT)
@click.argument("question")
@click.option("--rev", default="HEAD", show_default=True, help="Ask the index as of this commit, branch or tag.")
@click.option("--doc", "docs", multiple=True, help="Only this document (repeatable).")
@click.option("--max-pages", type=int, default=None, help="Most pages read (default from hti.yaml: 12).")
@click.option("--max-level-ups", type=int, default=None, help="Branching budget (default from hti.yaml: 2).")
@click.option("--no-fallback", is_flag=True, help="Do not search source.txt when navigation misses.")
@click.option("--method", type=click.Choice(["auto", "fast", "llm"]), default="auto", show_default=True,
              help="llm: the model navigates and answers; fast: offline lexical; auto: llm when a model is configured.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache (llm method).")
@click.option("--trace", is_flag=True, help="Show every navigation step (page, decision, tokens).")
@click.option("--json", "as_json", is_flag=True, help="Print {answer, found, fallback, citations, usage, trace}.")
@click.pass_context
def ask(ctx: click.Context, question: str, rev: str, docs: tuple[str, ...], max_pages: int | None,
        max_level_ups: int | None, no_fallback: bool, method: str, no_cache: bool, trace: bool,
        as_json: bool) -> None:
    """Answer QUESTION by navigating the index at a revision (no checkout needed).

    \b
    Example:
      hti-git ask "Which state's law governs this agreement?"
      hti-git ask --rev HEAD~1 --json "Who are the parties?"
      hti-git ask --method llm --trace "Who may terminate, and on what notice?"
    """
    from hti_git.query.ask import ask_question

    repo, settings = _repo(ctx)
    answer = ask_question(repo, settings, question, rev=rev, docs=list(docs) or None, method=method,
                          max_pages=max_pages, max_level_ups=max_level_ups, use_fallback=not no_fallback,
                          no_cache=no_cache)
    if as_json:
        _emit_json(answer.to_dict())
        return
    if trace:
        for step in answer.trace:
            cost = f"tokens={step.tokens}" if answer.method == "llm" else f"score={step.score:g}"
            click.echo(click.style(f"  {step.action:<9} {step.page or '-'}  {cost} {step.note}", dim=True), err=True)
    reason = answer.answer.partition("not found: ")[2] if not answer.found else ""
    click.echo(answer.answer if answer.found else f"Not found: {reason}." if reason else "Not found in the index or the source.")
    nearest = _nearest_read(answer) if not answer.found and answer.method == "fast" else []
    if nearest:
        click.echo("\nClosest passages read (none holds enough of the question's words):")
        for page, note in nearest:
            click.echo(f"  - {note}  {page}")
    if answer.citations:
        click.echo("")
        label = "Citations (fallback: read from source.txt)" if answer.fallback else "Citations"
        click.echo(f"{label}:")
        for i, c in enumerate(answer.citations, 1):
            pages = f", p. {', '.join(map(str, c.pages))}" if c.pages else ""
            click.echo(f"  [{i}] {c.page}  {c.source_link}  (chars {c.start}-{c.end}{pages})")
    u = answer.usage
    click.echo(f"\nCost: {u['calls']} model calls, {u['input_tokens']} input / {u['output_tokens']} output tokens "
               f"({answer.method}, at {rev}{' ' + answer.commit[:10] if answer.commit else ''})")
    if not answer.found:
        ctx.exit(0)


@main.command(context_settings=CONTEXT)
@click.argument("path", required=False)
@click.option("--rev", default="HEAD", show_default=True, help="Read the page at this revision.")
@click.option("--raw", is_flag=True, help="Print the page's bytes including front-matter.")
@click.pass_context
def show(ctx: click.Context, path: str | None, rev: str, raw: bool) -> None:
    """Show the documents, one document's tree of pages, or one page.

    With no PATH: the documents (with a single document, its tree). PATH is a document name (or a
    unique prefix of one) for its tree, or a page's repository path for the page.

    \b
    Example:
      hti-git show
      hti-git show slingerbag
      hti-git show slingerbag/index.md
      hti-git show --rev HEAD~1 contract/clauses/index.md
    """
    from hti_git.index.tree import list_documents, page_tree, resolve_document, resolve_page_path

    repo, _ = _repo(ctx)
    snapshot = repo.snapshot(rev)
    doc = None
    if path is None:
        rows = list_documents(snapshot)
        if not rows:
            click.echo("No documents compiled yet. Try: hti-git compile FILE")
            return
        if len(rows) > 1:
            width = max(len(r["doc"]) for r in rows)
            for r in rows:
                click.echo(f"{r['doc']:<{width}}  {r['pages'] or 0:>5}  {r['title'] or ''}")
            click.echo(f"{len(rows):,} documents at {rev}. Show one's tree: hti-git show DOC", err=True)
            return
        doc = rows[0]["doc"]
    elif "/" not in path.strip().strip("/") and (snapshot.root_entries().get(path.strip()) or ("tree",))[0] == "tree":
        doc = resolve_document(snapshot, path)
    if doc is not None:
        if raw:
            click.echo(snapshot.read_bytes(f"{doc}/index.md").decode("utf-8"), nl=False)
            return
        for row in page_tree(snapshot, doc):
            indent = "  " * row["depth"]
            click.echo(f"{indent}{row['title']}  ({row['path']})")
        return
    page_path = resolve_page_path(snapshot, path)
    if raw:
        click.echo(snapshot.read_bytes(page_path).decode("utf-8"), nl=False)
    else:
        click.echo(snapshot.page(page_path).body, nl=False)


@main.command(name="ls", context_settings=CONTEXT)
@click.option("--rev", default="HEAD", show_default=True, help="List documents at this revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def ls_command(ctx: click.Context, rev: str, as_json: bool) -> None:
    """List compiled documents: pages, method, model and source hash.

    \b
    Example:
      hti-git ls
      hti-git ls --rev main~3 --json
    """
    from hti_git.index.tree import list_documents

    repo, _ = _repo(ctx)
    rows = list_documents(repo.snapshot(rev))
    if as_json:
        _emit_json(rows)
        return
    if not rows:
        click.echo("No documents compiled yet. Try: hti-git compile FILE")
        return
    width = max(len(r["doc"]) for r in rows)
    lines = [f"{'DOCUMENT':<{width}}  {'PAGES':>5}  {'METHOD':<8}  {'MODEL':<12}  SOURCE SHA256"]
    for r in rows:
        sha = (r["source_sha256"] or "").removeprefix("sha256:")[:12]
        lines.append(f"{r['doc']:<{width}}  {r['pages']:>5}  {r['method'] or '-':<8}  {r['model'] or '-':<12}  {sha}")
    click.echo("\n".join(lines))  # one write: 10,000 echo calls cost a fifth of a second


@main.command(name="diff", context_settings=CONTEXT)
@click.argument("rev_a", metavar="A")
@click.argument("rev_b", metavar="B", default="HEAD", required=False)
@click.option("--doc", "doc_name", default=None, help="Only this document.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md"]), default="text", show_default=True,
              help="text (coloured on a terminal), json (stable, see hti_git/review/diff.py) or md (PR comment).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Most items listed per section before 'N more' (default: 25 for md, 200 for text).")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON (the same as --format json).")
@click.pass_context
def diff_command(ctx: click.Context, rev_a: str, rev_b: str, doc_name: str | None, fmt: str, limit: int | None,
                 as_json: bool) -> None:
    """Semantic diff of the index between revisions A and B (default B: HEAD), without checkout.

    Reports documents added/removed/recompiled, provenance (source vs model changes), schema,
    subjects added/removed/renamed/changed with field-level before -> after, summary word diffs and
    token usage. Identical revisions print nothing (md: a one-line note) and exit 0.

    \b
    Example:
      hti-git diff main hti/contract/fast-1a2b3c4d
      hti-git diff HEAD~1 HEAD --doc contract --format md > comment.md
      hti-git diff main HEAD --json
    """
    from hti_git.review.diff import diff_revisions
    from hti_git.review.render import render_markdown, render_text

    if as_json and fmt not in ("text", "json"):
        raise click.UsageError(f"--json and --format {fmt} ask for different outputs; pass one of them")
    repo, _ = _repo(ctx)
    result = diff_revisions(repo, rev_a, rev_b, doc_name)
    if fmt == "json" or as_json:
        _emit_json(result)
    elif fmt == "md":
        click.echo(render_markdown(result, limit or 25), nl=False)
    else:
        click.echo(render_text(result, color=sys.stdout.isatty(), limit=limit or 200), nl=False)


@main.command(name="log", context_settings=CONTEXT)
@click.option("--doc", "doc_name", default=None, help="Only compiles of this document.")
@click.option("--rev", default=None, help="Only history reachable from this revision (default: every branch).")
@click.option("-n", "max_count", type=click.IntRange(min=1), default=200, show_default=True, help="Most entries.")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@click.pass_context
def log_command(ctx: click.Context, doc_name: str | None, rev: str | None, max_count: int, as_json: bool) -> None:
    """Compile history from commit trailers: when, document, source, method/model, schema, tokens, branch.

    \b
    Example:
      hti-git log
      hti-git log --doc contract --json
    """
    from hti_git.review.log import compile_log

    repo, _ = _repo(ctx)
    rows = compile_log(repo, doc_name, rev, max_count)
    if as_json:
        _emit_json(rows)
        return
    if not rows:
        click.echo("No compiles yet. Try: hti-git compile FILE")
        return
    for r in rows:
        tokens = f"{r['tokens_in'] or 0:,} in / {r['tokens_out'] or 0:,} out"
        where = f"  [{', '.join(r['branches'])}]" if r["branches"] else ""
        click.echo(f"{click.style(r['sha'][:10], fg='yellow') if sys.stdout.isatty() else r['sha'][:10]}  "
                   f"{r['date'][:19]}  {r['doc']}{where}")
        click.echo(f"    {r['method'] or '-'}/{r['model'] or '-'}  source {(r['source_sha256'] or '-').removeprefix('sha256:')[:12]}  "
                   f"schema {(r['schema'] or '-').removeprefix('sha256:')[:12]}  {r['pages'] or 0} pages  "
                   f"{r['calls'] or 0} calls, {tokens} tokens")


@main.command(name="verify", context_settings=CONTEXT)
@click.option("--rev", default="HEAD", show_default=True, help="Verify the index as of this revision.")
@click.option("--doc", "docs", multiple=True, help="Only this document (repeatable).")
@click.option("--since", default=None, metavar="REV", help="Only documents whose folders changed since REV.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes for many documents (default: one per core).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def verify_command(ctx: click.Context, rev: str, docs: tuple[str, ...], since: str | None, jobs: int | None,
                   as_json: bool) -> None:
    """Check the index is internally true; exit 1 with one line per problem.

    Every span lies inside source.txt and its value's text is found there; the root's hashes match
    source.txt and schema.yaml; every link resolves; every page fits the page budget; the catalogue
    (catalog/*.jsonl) lists exactly the documents, each as its root page describes it.

    \b
    Example:
      hti-git verify
      hti-git verify --since HEAD~1
      hti-git verify --rev main --json
    """
    from hti_git.review.verify import verify_revision

    repo, _ = _repo(ctx)
    report = verify_revision(repo, rev, list(docs) or None, since=since, jobs=jobs)
    if as_json:
        _emit_json(report.to_dict())
    else:
        for problem in report.problems:
            click.echo(problem.line())
        scope = f" changed since {since}" if since else ""
        summary = (f"{len(report.docs)} document(s){scope}, {report.pages} pages, {report.values} values "
                   f"({report.unverified_skipped} unverified skipped), {report.spans} spans, {report.links} links "
                   f"at {rev}; catalogue {report.catalog}")
        if report.ok:
            click.echo(f"OK: {summary}")
        else:
            click.echo(f"{len(report.problems)} problem(s) in {summary}", err=True)
    if not report.ok:
        ctx.exit(1)


@main.command(context_settings=CONTEXT)
@click.option("--model", default=None, help="Check this model instead of the configured one.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def check(ctx: click.Context, model: str | None, as_json: bool) -> None:
    """Call the configured model endpoint once and report model, latency and structured output.

    The first thing to run after setting OPENAI_API_KEY / OPENAI_BASE_URL / HTI_MODEL.
    Exits non-zero when the endpoint cannot be used.

    \b
    Example:
      OPENAI_BASE_URL=http://localhost:11434/v1 HTI_MODEL=llama3.1 hti-git check
    """
    from hti_git.llm.check import check_endpoint
    from hti_git.workspace import model_setup

    setup = model_setup(ctx.obj["dir"], model)
    report = check_endpoint(setup.settings, setup.root)
    if as_json:
        _emit_json(report)
    else:
        status = click.style("ok", fg="green") if report["ok"] else click.style("failed", fg="red")
        click.echo(f"endpoint           {report['base_url']}")
        click.echo(f"model              {report['model'] or '(server default)'}")
        click.echo(f"status             {status}")
        if report["latency_ms"] is not None:
            click.echo(f"latency            {report['latency_ms']:.0f} ms")
        structured = {True: "json_schema supported", False: "JSON mode fallback (validated + repair)", None: "unknown"}
        click.echo(f"structured output  {structured[report['structured_output']]}")
        if report["error"]:
            click.echo(f"error              {report['error']}")
    if not report["ok"]:
        ctx.exit(1)


@main.group(context_settings=CONTEXT)
def cache() -> None:
    """Inspect or clear the model response cache (.git/hti/cache.sqlite).

    \b
    Example:
      hti-git cache stats
      hti-git cache clear
    """


@cache.command(name="stats", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.pass_context
def cache_stats(ctx: click.Context, as_json: bool) -> None:
    """Show how many responses are cached and how much space they take.

    \b
    Example:
      hti-git cache stats --json
    """
    from hti_git.llm.cache import CACHE_FILE, ResponseCache

    repo, _ = _repo(ctx)
    with ResponseCache(repo.hti_dir / CACHE_FILE) as store:
        stats = store.stats()
    if as_json:
        _emit_json(stats)
        return
    click.echo(f"{stats['entries']} cached responses, {stats['bytes'] / 1024:.0f} KiB in {stats['path']}")
    for name, n in stats["models"].items():
        click.echo(f"  {name}: {n}")


@cache.command(name="clear", context_settings=CONTEXT)
@click.pass_context
def cache_clear(ctx: click.Context) -> None:
    """Delete every cached model response (the next compile calls the model again).

    \b
    Example:
      hti-git cache clear
    """
    from hti_git.llm.cache import CACHE_FILE, ResponseCache

    repo, _ = _repo(ctx)
    with ResponseCache(repo.hti_dir / CACHE_FILE) as store:
        removed = store.clear()
    click.echo(f"Removed {removed} cached response(s).")


@main.command(name="eval", context_settings=CONTEXT)
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--rev", "revs", multiple=True, help="Evaluate the index at this revision (repeatable; default HEAD).")
@click.option("--baseline", "baselines", multiple=True, type=click.Choice(["full-document", "chunks"]),
              help="Also run this baseline with the same model (repeatable).")
@click.option("--out", "out_dir", default="eval-out", show_default=True, type=click.Path(file_okay=False),
              help="Folder for report.md, results.jsonl and plot.png.")
@click.option("--method", type=click.Choice(["auto", "fast", "llm"]), default="auto", show_default=True,
              help="How the index answers (as for ask); without a model every system runs offline.")
@click.option("--judge-model", default=None, help="Model for the LLM judge (default: the configured model).")
@click.option("--no-judge", is_flag=True, help="Score by the deterministic match only.")
@click.option("--chunks-k", type=click.IntRange(min=1), default=3, show_default=True,
              help="Passages the chunks baseline retrieves.")
@click.option("--context-tokens", type=click.IntRange(min=1), default=128_000, show_default=True,
              help="Context limit for the full-document baseline (longer sources are cut, with a note).")
@click.option("--no-cache", is_flag=True, help="Answer everything again instead of resuming from .git/hti/eval/.")
@click.option("--baselines-only", is_flag=True,
              help="Run only the baselines, not the index (e.g. served by another model or endpoint).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Questions answered at once, each in a worker process (with a model, answering is "
                   "mostly waiting on the endpoint).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary (systems, comparisons, files) as JSON.")
@click.pass_context
def eval_command(ctx: click.Context, questions: str, revs: tuple[str, ...], baselines: tuple[str, ...], out_dir: str,
                 method: str, judge_model: str | None, no_judge: bool, chunks_k: int, context_tokens: int,
                 no_cache: bool, baselines_only: bool, jobs: int, as_json: bool) -> None:
    """Score the index on a question set against baselines: accuracy, evidence recall and tokens.

    QUESTIONS is JSON Lines: question, answer (the reference), optional doc and evidence (gold
    passages). Answers are scored by a normalised match (yes/no, dates, numbers, names), else by an
    LLM judge when a model is configured. Without a model everything runs offline: the index answers
    with `fast`, `chunks` extractively, `full-document` reports only what its prompt would cost.
    Answers are cached, so an interrupted run resumes. Two --rev show per-question wins and losses.

    \b
    Example:
      hti-git eval qa.jsonl --baseline full-document --baseline chunks --out eval-out
      hti-git eval qa.jsonl --rev main --rev hti/contract/gpt-5-mini --json
      hti-git eval qa.jsonl --method llm -j 8      # eight questions at a time
    """
    from hti_git.eval.harness import EvalOptions, run_eval
    from hti_git.eval.questions import load_questions
    from hti_git.eval.report import render_table, write_outputs

    repo, settings = _repo(ctx)
    qs = load_questions(questions)
    options = EvalOptions(revs=revs or ("HEAD",), baselines=baselines, method=method, judge=not no_judge,
                          judge_model=judge_model, chunks_k=chunks_k, context_tokens=context_tokens,
                          use_cache=not no_cache, index=not baselines_only, jobs=jobs)
    bar: dict[str, Any] = {"done": 0}

    def progress(done: int, total: int, label: str) -> None:
        if as_json or not sys.stderr.isatty():
            return
        if "bar" not in bar:
            bar["bar"] = click.progressbar(length=total, label="answering", file=sys.stderr)
        bar["bar"].label = f"answering ({label})"
        bar["bar"].update(done - bar["done"])
        bar["done"] = done

    try:
        result = run_eval(repo, settings, qs, options, source=Path(questions).name, progress=progress)
    finally:
        if "bar" in bar:
            bar["bar"].render_finish()
    written = write_outputs(result, Path(out_dir))
    if as_json:
        _emit_json({**result.to_dict(), "files": written})
        return
    click.echo(render_table(result), nl=False)
    if result.mode == "offline":
        click.echo("Offline (no model): index with fast, chunks extractive, full-document accuracy n/a; "
                   "'~' tokens are estimates of text read.")
    if result.judge["status"] != "used":
        click.echo(f"Judge {result.judge['status']}: {result.judge['note']}.")
    for c in result.comparisons:
        click.echo(f"{c['base']} -> {c['other']}: {len(c['wins'])} won, {len(c['losses'])} lost, "
                   f"{c['unchanged']} unchanged")
    click.echo(f"Report: {written['report']}  results: {written['results']}  "
               f"plot: {written['plot'] or written.get('plot_note')}")


@main.group(name="schema", context_settings=CONTEXT)
def schema_group() -> None:
    """Propose a schema (the categories and fields a standard compile fills in) for a team to review.

    \b
    Example:
      hti-git schema discover contracts/ -o schema.yaml
      hti-git compile contracts/ --schema schema.yaml
    """


@schema_group.command(name="discover", context_settings=CONTEXT)
@click.argument("docs", nargs=-1, required=True)
@click.option("-o", "--output", default="schema.yaml", show_default=True, type=click.Path(dir_okay=False),
              help="Where to write the schema (YAML); '-' prints it.")
@click.option("--model", default=None, help="Model to ask (overrides hti.yaml and HTI_MODEL).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the model response cache.")
@click.option("--json", "as_json", is_flag=True, help="Print {output, documents, categories, usage, notes} as JSON.")
@click.pass_context
def schema_discover(ctx: click.Context, docs: tuple[str, ...], output: str, model: str | None, no_cache: bool,
                    as_json: bool) -> None:
    """Propose one schema for a corpus: the model reads a sample across DOCS (files, folders, globs).

    Each document contributes its opening and evenly spaced excerpts within a shared token budget;
    one model call proposes the overview, categories and fields. Review the file in a pull request,
    then compile every document against it with `compile --schema`.

    \b
    Example:
      hti-git schema discover contracts/ -o schema.yaml
      hti-git schema discover a.pdf b.pdf --model gpt-5-mini -o -
    """
    from hti_git.compile.preview import propose_schema
    from hti_git.compile.schema import dump_schema_yaml
    from hti_git.workspace import model_setup

    setup = model_setup(ctx.obj["dir"], model)  # a schema can be proposed before any index exists
    result = propose_schema(list(docs), setup.settings, setup.root, setup.cache_path, no_cache=no_cache)
    data = dump_schema_yaml(result["schema"])
    if output == "-":
        click.echo(data.decode("utf-8"), nl=False)
    else:
        Path(output).write_bytes(data)
    total = result["usage"]["total"]
    if as_json:
        _emit_json({"output": output, "documents": result["documents"],
                    "categories": [c.name for c in result["schema"].categories], "usage": total,
                    "notes": result["notes"]})
        return
    if output != "-":
        names = ", ".join(c.name for c in result["schema"].categories)
        click.echo(f"Wrote {output}: {len(result['schema'].categories)} categories ({names}) from "
                   f"{len(result['documents'])} document(s); {total['calls']} model call(s), "
                   f"{total['input_tokens']:,} input tokens.")
        click.echo(f"Review it, then: hti-git compile {' '.join(docs)} --schema {output}")
    for note in result["notes"]:
        click.echo(f"  note: {note}", err=True)


@main.command(name="mcp", context_settings=CONTEXT)
@click.pass_context
def mcp_command(ctx: click.Context) -> None:
    """Serve this index to agents over the Model Context Protocol (stdio), read-only, at any revision.

    Needs the extra: pip install 'hti-git[mcp]'. See the README for the mcpServers snippet.

    \b
    Example:
      hti-git -C /path/to/index mcp
    """
    from hti_git.mcp_server import serve

    serve(ctx.obj["dir"])


def run() -> None:  # pragma: no cover - console entry for `python -m hti_git`
    main(prog_name="hti-git", windows_expand_args=False)


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    run()
