"""hti-git mcp: the server over stdio with the SDK's own client, and the read-only service under it.

The end-to-end test acts as a simple agent: outline -> read_page -> read_source, choosing by word
overlap with the question, and checks that the cited lines overlap CUAD's gold evidence for that
question (examples/eval/qa.jsonl, CC BY 4.0) located in source.txt.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (the SDK's dependency)
from click.testing import CliRunner  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from hti_git.cli import main  # noqa: E402
from hti_git.errors import UsageError  # noqa: E402
from hti_git.lexical import question_terms, terms  # noqa: E402
from hti_git.mcp_server import HARD_MAX_CHARS, IndexService  # noqa: E402
from hti_git.workspace import init_index  # noqa: E402

DOC = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
QA = Path(__file__).resolve().parents[2] / "examples" / "eval" / "qa.jsonl"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOOLS = {"list_documents", "outline", "read_page", "search", "read_source", "ask", "diff"}


def _gold(category: str) -> dict:
    rows = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    return next(r for r in rows if r["doc"] == DOC and r["category"] == category)


def _compiled(root: Path) -> Path:
    init_index(root)
    result = CliRunner().invoke(main, ["-C", str(root), "compile", "--method", "fast", str(FIXTURES / f"{DOC}.txt")])
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture(scope="module")
def shared_idx(tmp_path_factory) -> Path:
    """One index repository with the shared consulting agreement compiled with --method fast, for the
    tests that only read it (compiled once per module, under the same pinned identity as conftest)."""
    root = tmp_path_factory.mktemp("mcp")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTI_MODEL", "HTI_METHOD"):
            mp.delenv(name, raising=False)
        for name, value in {"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
                            "GIT_COMMITTER_NAME": "Test Committer", "GIT_COMMITTER_EMAIL": "committer@example.com",
                            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(root / ".gitconfig")}.items():
            mp.setenv(name, value)
        return _compiled(root / "idx")


@pytest.fixture
def idx(shared_idx) -> Path:
    return shared_idx


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


async def _session_run(root: Path, body):
    params = StdioServerParameters(command=sys.executable, args=["-m", "hti_git", "-C", str(root), "mcp"],
                                   env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def _run(root: Path, body):
    return anyio.run(_session_run, root, body)


async def _text(session, tool: str, **args) -> str:
    result = await session.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def _best(candidates: list[tuple[str, str, str]], question: str) -> str:
    """The candidate (key, title, summary) whose words best match the question: the agent's choice.

    Each shared word weighs by its rarity among the candidates (IDF), double when in the title.
    """
    q = set(question_terms(question))
    bags = [(set(terms(title)), set(terms(f"{title} {summary}"))) for _, title, summary in candidates]
    idf = {t: math.log(1 + len(bags) / (1 + sum(t in words for _, words in bags))) for t in q}

    def score(i: int) -> float:
        title, words = bags[i]
        return sum(idf[t] * (2 if t in title else 1) for t in q & words)

    return candidates[max(range(len(candidates)), key=score)][0]


def _line_ranges(source: str, passages: list[str]) -> list[tuple[int, int]]:
    """1-based line ranges of each gold passage in source.txt (whitespace-insensitive)."""
    out = []
    for passage in passages:
        pattern = r"\s+".join(re.escape(w) for w in passage.split())
        m = re.search(pattern, source)
        if m:
            out.append((source.count("\n", 0, m.start()) + 1, source.count("\n", 0, m.end()) + 1))
    return out


# The stand-in agent chooses by IDF-weighted word overlap (titles count double), which is far weaker
# than a model: it finds these three; for "Anti-Assignment" it opens 6.1 Notices. The tokens and
# accuracy of a real agent driving the same tools are measured by bench/mcp_agent_tokens.py.
@pytest.mark.parametrize("category", ["Governing Law", "Effective Date", "Expiration Date"])
def test_agent_answers_by_outline_read_page_read_source(idx, category):
    gold = _gold(category)
    question = gold["question"]

    async def agent(session):
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        described = {t.name: t.description for t in tools.tools}
        docs = await _text(session, "list_documents")
        outline = await _text(session, "outline", doc=DOC, depth=3, max_chars=HARD_MAX_CHARS)
        entries = re.findall(r"^\s*- (.+?) — (.*) \[(\S+\.md)\]$", outline, flags=re.M)
        page_path = _best([(path, title, summary) for title, summary, path in entries
                           if not path.endswith("index.md")], question)
        page = await _text(session, "read_page", path=page_path, doc=DOC)
        # Values under each field; a bare heading is a label, not evidence.
        fields = [f for f in re.split(r"^## ", page, flags=re.M)[1:] if not f.startswith("heading\n")]
        values = [v for f in fields for v in re.findall(r"^- (.+) \(L(\d+)-L(\d+) chars (\d+)-(\d+)\)$", f, flags=re.M)]
        text, a, b, s, e = max(values, key=lambda v: len(set(question_terms(question)) & set(terms(v[0]))))
        source = await _text(session, "read_source", doc=DOC, start_line=int(a), end_line=int(b),
                             start_char=int(s), end_char=int(e))
        return names, described, docs, page_path, (int(a), int(b)), text, source

    names, described, docs, page_path, cited, value_text, source = _run(idx, agent)
    assert names == TOOLS
    assert "outline" in described["read_page"] and "read_source" in described["read_page"]
    assert "before reading" in described["outline"]
    assert DOC in docs
    # The source text the citation points at is the value the page showed, verbatim.
    assert " ".join(value_text.split()) in " ".join(source.split())
    assert source.startswith(f"[{DOC}/source.txt#L{cited[0]}-L{cited[1]} ")
    full = (idx / DOC / "source.txt").read_text(encoding="utf-8")
    gold_lines = _line_ranges(full, gold["evidence"])
    assert gold_lines, "the gold evidence is in source.txt"
    assert any(cited[0] <= gb and ga <= cited[1] for ga, gb in gold_lines), (page_path, cited, gold_lines)
    # ...and the text read overlaps the gold passage itself, not just its (long) line.
    gold_words = [set(terms(p)) for p in gold["evidence"]]
    read_words = set(terms(source.split("]\n", 1)[1]))
    assert max(len(g & read_words) / len(g) for g in gold_words if g) >= 0.6


def test_errors_are_mcp_errors_and_nothing_escapes(idx):
    async def probe(session):
        out = {}
        cases = {
            "dotdot": ("read_page", {"path": f"{DOC}/../hti.yaml"}),
            "absolute": ("read_page", {"path": "/etc/passwd"}),
            "git": ("read_page", {"path": ".git/config"}),
            "outside_doc": ("read_page", {"path": "hti.yaml"}),
            "source_via_page": ("read_page", {"path": f"{DOC}/source.txt"}),
            "bad_rev": ("list_documents", {"rev": "no-such-branch"}),
            "option_rev": ("outline", {"doc": DOC, "rev": "--output=/tmp/x"}),
            "blob_rev": ("read_page", {"path": "index.md", "doc": DOC, "rev": "HEAD:hti.yaml"}),
            "bad_doc": ("outline", {"doc": "no-such-doc"}),
            "bad_lines": ("read_source", {"doc": DOC, "start_line": 10_000}),
            "bad_k": ("search", {"query": "law", "k": 0}),
            "bad_type": ("read_source", {"doc": DOC, "start_line": "ten"}),
            "bad_method": ("ask", {"question": "Who are the parties?", "method": "magic"}),
        }
        for key, (tool, args) in cases.items():
            result = await session.call_tool(tool, args)
            out[key] = (result.is_error, result.content[0].text)
        for uri in (f"hti://HEAD/{DOC}/../hti.yaml", f"hti://HEAD/{DOC}/source.txt", f"hti://nope/{DOC}/index.md"):
            try:
                await session.read_resource(uri)
                out[uri] = "read"
            except Exception as exc:  # the SDK raises MCPError for an error response
                out[uri] = type(exc).__name__
        ok = await session.read_resource(f"hti://HEAD/{DOC}/clauses/index.md")
        out["resource"] = ok.contents[0].text
        out["alive"] = await _text(session, "list_documents")  # the server survived every bad call
        return out

    before = (_git(idx, "rev-parse", "HEAD"), _git(idx, "status", "--porcelain"))
    out = _run(idx, probe)
    for key in ("dotdot", "absolute", "git", "outside_doc", "source_via_page", "bad_rev", "option_rev",
                "blob_rev", "bad_doc", "bad_lines", "bad_k", "bad_type", "bad_method"):
        is_error, text = out[key]
        assert is_error, (key, text)
        assert "root:" not in text and "[core]" not in text and "model:" not in text  # nothing was read
    assert "read_source" in out["source_via_page"][1]
    assert "no-such-branch" in out["bad_rev"][1] and "no-such-doc" in out["bad_doc"][1]
    assert all(v == "MCPError" for k, v in out.items() if k.startswith("hti://")), out
    assert out["resource"].startswith("# Clauses")
    assert DOC in out["alive"]
    assert (_git(idx, "rev-parse", "HEAD"), _git(idx, "status", "--porcelain")) == before  # read-only


@pytest.fixture
def service(idx):
    s = IndexService(idx)
    yield s
    s.close()


@pytest.mark.parametrize("path", [
    "../x", f"{DOC}/../../etc/passwd", "/etc/passwd", "~/x", "C:/x", f"{DOC}\\..\\x", f"{DOC}/./index.md",
    f"{DOC}//index.md", f"{DOC}/index.md\0", f"{DOC}/.git/config", ".git/HEAD", "hti.yaml", "templates/ask.md",
    f"{DOC}/source.txt", f"{DOC}/missing.md", "",
])
def test_read_page_refuses_every_path_outside_the_index_pages(service, path):
    with pytest.raises(UsageError):
        service.read_page(path)


def test_paths_resolve_as_outline_shows_them(service):
    full = service.read_page(f"{DOC}/clauses/index.md")
    assert service.read_page("clauses/index.md", doc=DOC) == full
    assert service.read_page("clauses/index.md") == full  # one document: the doc may be left out
    assert service.read_page(f"{DOC}/clauses") == full  # a folder reads as its index page
    assert "Slinger Bag" in service.read_page(DOC)


def test_outputs_are_bounded_and_say_so(service):
    lines = service.read_source(DOC, 1, 34)
    assert len(lines) <= 12_000 + 200 and "[truncated: showed" in lines and "of 33," in lines
    small = service.outline(DOC, depth=6, max_chars=500)
    assert len(small) <= 700 and "[truncated" in small
    with pytest.raises(UsageError):
        service.read_page(f"{DOC}/index.md", max_chars=HARD_MAX_CHARS + 1)
    with pytest.raises(UsageError):
        service.outline(DOC, depth=99)
    # Paging with offset reads the whole page back, piece by piece.
    path = f"{DOC}/clauses/article-7-general/index.md"
    whole = service.read_page(path, max_chars=HARD_MAX_CHARS)
    assert "[truncated" not in whole
    pieces, offset = [], 0
    while True:
        part = service.read_page(path, offset=offset, max_chars=1000)
        if offset:
            head, part = part.split("\n", 1)
            assert head == f"[{path} from character {offset:,}]"
        m = re.search(r"\n\[truncated: showed characters [\d,]+-[\d,]+ of [\d,]+; read on with "
                      r"read_page\(path, offset=(\d+)\)\]$", part)
        pieces.append(part[: m.start()] if m else part)
        if not m:
            break
        offset = int(m.group(1))
    assert len(pieces) > 2 and "".join(pieces) == whole


def test_read_source_cites_exact_spans(service, idx):
    text = (idx / DOC / "source.txt").read_text(encoding="utf-8")
    start = text.index("This Agreement will be construed")
    end = text.index("federal court.", start) + len("federal court.")
    line = text.count("\n", 0, start) + 1
    out = service.read_source(DOC, line, line, start_char=start, end_char=end)
    assert out.splitlines()[1] == f"L{line}: {text[start:end]}"
    with pytest.raises(UsageError):
        service.read_source(DOC, line, line, start_char=0, end_char=10)  # outside the lines asked for


def test_revisions_search_ask_and_diff(tmp_path):
    idx = _compiled(tmp_path / "idx")  # this test commits, so it has a repository of its own
    service = IndexService(idx)
    amended = idx.parent / f"{DOC}.txt"
    amended.write_text((FIXTURES / f"{DOC}.txt").read_text().replace("State of New York", "State of Delaware"))
    result = CliRunner().invoke(main, ["-C", str(idx), "compile", "--method", "fast", "--in-place", "--replace", str(amended)])
    assert result.exit_code == 0, result.output
    law = "clauses/article-7-general/7-10-governing-law.md"
    assert "Delaware" in service.read_page(law, doc=DOC)
    assert "New York" in service.read_page(law, doc=DOC, rev="HEAD~1")
    assert "Delaware" in service.ask("Which state's law governs this agreement?")
    assert "New York" in service.ask("Which state's law governs this agreement?", rev="HEAD~1")
    hits = service.search("governing law Delaware", doc=DOC, k=3)
    assert "governing-law" in hits and hits.count("\n") == 3
    diff = service.diff("HEAD~1", "HEAD")
    assert "Delaware" in diff and "7.10 Governing Law" in diff
    assert service.diff("HEAD", "HEAD").startswith("No index changes")
    service.close()


def test_search_builds_its_collection_once_per_revision(shared_idx, monkeypatch):
    """An agent searches many times at one revision: pages are read and ranked into one collection once."""
    from hti_git.store import Snapshot

    service = IndexService(shared_idx)
    reads = []
    original = Snapshot.page
    monkeypatch.setattr(Snapshot, "page", lambda self, path: reads.append(path) or original(self, path))
    first = service.search("governing law", doc=DOC, k=3)
    built = len(reads)
    again = service.search("governing law", doc=DOC, k=3)
    other = service.search("termination notice", doc=DOC, k=3)
    assert built > 0 and first == again and "termination" in other.lower()
    assert len(reads) - built <= 6  # only the hits' pages, for their titles: no page read to rebuild
    service.close()
