"""The catalogue (catalog.jsonl): written with each compile, deterministic, read instead of root
pages, repaired when stale or missing, checked by verify; and the commands that lean on it."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from hti_git.cli import main
from hti_git.compile.batch import compile_many
from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.errors import UsageError
from hti_git.index import catalog as catalog_mod
from hti_git.index.catalog import CATALOG_FILE, parse_catalog, read_catalog
from hti_git.index.tree import list_documents, requested_documents, unknown_document
from hti_git.review import verify as verify_mod
from hti_git.review.verify import verify_revision, verify_snapshot
from hti_git.store import IndexRepo, Snapshot, tree_sha
from hti_git.workspace import init_index


def _git(path, *args) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def run(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def _copies(contract_text, folder, names):
    """Distinct documents: the fixture contract with a line naming each appended."""
    folder.mkdir(exist_ok=True)
    text = contract_text.read_text()
    paths = []
    for name in names:
        p = folder / f"{name}.txt"
        p.write_text(f"{text}\n\nCopy reference: {name}.\n")
        paths.append(p)
    return paths


@pytest.fixture
def corpus(tmp_path, contract_text):
    """An index with three documents compiled in one batch."""
    init_index(tmp_path / "idx")
    paths = _copies(contract_text, tmp_path / "docs", ["alpha-lease", "beta-supply", "gamma-licence"])
    repo = IndexRepo(tmp_path / "idx")
    batch = compile_many(repo, [str(p) for p in paths], Settings(), jobs=2)
    assert not batch.failures and len(batch.results) == 3
    yield repo
    repo.close()


def _commit(repo, files, message="Hand edit", **kwargs):
    with repo.lock():
        return repo.commit(files, message, **kwargs).sha


def test_compile_writes_the_catalogue_in_the_same_commit(compiled_repo):
    snap = compiled_repo.snapshot("HEAD")
    changed = _git(compiled_repo.root, "show", "--name-only", "--format=", "HEAD").split()
    assert CATALOG_FILE in changed and any(p.endswith("/index.md") for p in changed)
    header, line = snap.read_text(CATALOG_FILE).splitlines()
    assert json.loads(header) == {"documents": 1, "hti_catalog": 1}
    entry = json.loads(line)
    doc = entry["doc"]
    root = snap.page(f"{doc}/index.md")
    assert entry["title"] == root.title and entry["method"] == "fast"
    assert entry["pages"] == sum(1 for p in snap.blob_shas(doc) if p.endswith(".md"))
    assert entry["source_sha256"] == root.meta["provenance"]["source"]["sha256"]
    assert entry["tree"] == snap.root_entries()[doc][1]  # the id computed before writing is Git's own
    assert entry["terms"] and all(isinstance(v, int) for v in entry["terms"].values())
    cat = read_catalog(snap)
    assert cat.current and cat.docs == [doc]
    report = verify_snapshot(snap)
    assert report.ok and report.catalog == "current"


def test_tree_sha_matches_git(tmp_path):
    files = {"a.md": b"x\n", "sub/b.md": b"y\n", "sub-c/c.md": b"z\n", "sub.txt": b"w"}
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as repo:
        sha = _commit(repo, {f"d/{k}": v for k, v in files.items()}, "files")
        assert repo.snapshot(sha).root_entries()["d"][1] == tree_sha(files)


def test_catalogue_bytes_are_deterministic(tmp_path, contract_text):
    paths = _copies(contract_text, tmp_path / "docs", ["one", "two"])
    blobs = []
    for i, order in enumerate([paths, paths[::-1]]):
        init_index(tmp_path / f"idx{i}")
        with IndexRepo(tmp_path / f"idx{i}") as repo:
            for p in order:
                compile_path(repo, p, Settings())
            blobs.append(repo.snapshot("HEAD").read_bytes(CATALOG_FILE))
            again = compile_path(repo, paths[0], Settings())
            assert again.status == "unchanged"
    assert blobs[0] == blobs[1]


def test_ls_and_doc_checks_read_no_page(corpus, monkeypatch):
    def no_pages(self, path):
        raise AssertionError(f"read a page: {path}")

    monkeypatch.setattr(Snapshot, "page", no_pages)
    snap = corpus.snapshot("HEAD")
    rows = list_documents(snap)
    assert [r["doc"] for r in rows] == ["alpha-lease", "beta-supply", "gamma-licence"]
    assert all(r["pages"] > 10 and r["method"] == "fast" and r["title"] for r in rows)
    assert requested_documents(snap, ["beta-supply"])[1] == ["beta-supply"]


def test_missing_catalogue_falls_back_to_root_pages(corpus):
    _commit(corpus, {}, "An index from before catalogues", remove=(CATALOG_FILE,))
    snap = corpus.snapshot("HEAD")
    cat = read_catalog(snap)
    assert not cat.present and cat.docs == ["alpha-lease", "beta-supply", "gamma-licence"]
    assert [r["doc"] for r in list_documents(snap)] == cat.docs
    report = verify_snapshot(snap)
    assert report.ok and report.catalog == "absent"
    out = run("-C", corpus.root, "ask", "--doc", "beta-supply", "Which state's law governs this agreement?").output
    assert "New York" in out
    # the next compile writes a catalogue of every document, the old ones included
    stored = {d: e for d, e in read_catalog(corpus.snapshot("HEAD~1")).entries.items()}
    run("-C", corpus.root, "compile", "--doc", "delta", corpus.root / "beta-supply" / "source.txt")
    entries, problems = parse_catalog(corpus.snapshot("HEAD").read_bytes(CATALOG_FILE))
    assert not problems and sorted(entries) == ["alpha-lease", "beta-supply", "delta", "gamma-licence"]
    assert entries["alpha-lease"] == stored["alpha-lease"]


def test_stale_catalogue_is_repaired_on_read_and_reported_by_verify(corpus, tmp_path):
    snap = corpus.snapshot("HEAD")
    gamma = {p: snap.read_bytes(p) for p in snap.blob_shas("gamma-licence")}
    # with plain Git: a document removed, another copied in under a new name
    copied = {p.replace("gamma-licence/", "omega/", 1): data for p, data in gamma.items()}
    _commit(corpus, copied, "Copy by hand", remove=("alpha-lease",))
    snap = corpus.snapshot("HEAD")
    cat = read_catalog(snap)
    assert cat.docs == ["beta-supply", "gamma-licence", "omega"]
    assert cat.rebuilt == ["omega"] and cat.dropped == ["alpha-lease"] and not cat.current
    assert [r["doc"] for r in list_documents(snap)] == cat.docs
    report = verify_snapshot(snap)
    lines = [p.line() for p in report.problems]
    assert report.catalog == "stale"
    assert "catalog.jsonl: catalog: lists alpha-lease, which is not an index at this revision" in lines
    assert "catalog.jsonl: catalog: omega is not listed" in lines
    # a hand-edited entry (tree id unchanged, so readers trust it): verify names the field
    entries, _ = parse_catalog(snap.read_bytes(CATALOG_FILE))
    entries["beta-supply"]["title"] = "Something else"
    _commit(corpus, {CATALOG_FILE: catalog_mod.render_catalog(entries)}, "Edit the catalogue")
    report = verify_snapshot(corpus.snapshot("HEAD"), ["beta-supply"])
    assert [p.line() for p in report.problems] == [
        "catalog.jsonl: catalog: lists alpha-lease, which is not an index at this revision",
        "catalog.jsonl: catalog: entry for beta-supply does not match its root page [title]"]


def test_duplicate_lines_from_a_union_merge_are_dropped_and_rebuilt(corpus):
    data = corpus.snapshot("HEAD").read_bytes(CATALOG_FILE)
    lines = data.decode().splitlines()
    beta = next(line for line in lines if '"doc":"beta-supply"' in line)
    twice = "\n".join(lines + [beta.replace('"pages":', '"pages":1') ]) + "\n"
    _commit(corpus, {CATALOG_FILE: twice.encode()}, "A merge left two lines")
    cat = read_catalog(corpus.snapshot("HEAD"))
    assert "beta-supply" in cat.rebuilt and cat.entries["beta-supply"] == json.loads(beta)
    assert any("repeats beta-supply" in m for m in cat.invalid)


def test_unknown_document_names_a_few_and_the_closest():
    names = [f"contract-{i:04d}" for i in range(500)]
    message = unknown_document("contarct-0123", names, "HEAD")
    assert "did you mean 'contract-0123'?" in message
    assert "(have 500: contract-0000, contract-0001, contract-0002, contract-0003, contract-0004 and 495 more" in message
    assert len(message) < 250
    assert "did you mean" not in unknown_document("zzzz", names, "HEAD")


def test_did_you_mean_on_the_command_line(corpus):
    out = run("-C", corpus.root, "ask", "--doc", "beta-suply", "Who are the parties?", code=2).output
    assert "no document 'beta-suply' at HEAD; did you mean 'beta-supply'?" in out
    out = run("-C", corpus.root, "show", "gama-licence", code=2).output
    assert "did you mean 'gamma-licence'?" in out
    out = run("-C", corpus.root, "verify", "--doc", "alpha", code=2).output
    assert "did you mean 'alpha-lease'?" in out
    with pytest.raises(UsageError, match="did you mean 'alpha-lease'"):
        requested_documents(corpus.snapshot("HEAD"), ["alpha-lase"])


def test_show_lists_documents_and_show_doc_shows_its_tree(corpus):
    listing = run("-C", corpus.root, "show").stdout.splitlines()
    assert [line.split()[0] for line in listing] == ["alpha-lease", "beta-supply", "gamma-licence"]
    tree = run("-C", corpus.root, "show", "beta").stdout
    assert tree.splitlines()[0].endswith("(beta-supply/index.md)")
    assert "Governing Law" in tree and "alpha-lease" not in tree
    page = run("-C", corpus.root, "show", "beta-supply/index.md").stdout
    assert page.startswith("# ")
    assert run("-C", corpus.root, "show", "hti.yaml").stdout.startswith("# hti-git settings")


def test_verify_since_checks_only_changed_documents(corpus, tmp_path, contract_text):
    base = _git(corpus.root, "rev-parse", "HEAD").strip()
    changed = tmp_path / "docs" / "beta-supply.txt"
    changed.write_text(changed.read_text() + "\nAn amendment line.\n")
    run("-C", corpus.root, "compile", changed)
    report = verify_revision(corpus, "HEAD", since=base)
    assert report.ok and report.docs == ["beta-supply"] and report.since == base
    assert report.pages > 10 and report.catalog == "current"
    out = run("-C", corpus.root, "verify", "--since", base).stdout
    assert out.startswith("OK: 1 document(s) changed since")
    assert verify_revision(corpus, "HEAD", since="HEAD").docs == []


def test_parallel_verify_gives_the_same_report(corpus, monkeypatch):
    # plant one fault so the merged problem list is compared too
    snap = corpus.snapshot("HEAD")
    path = next(p for p in snap.blob_shas("beta-supply") if p.endswith(".md") and p.count("/") >= 2)
    _commit(corpus, {}, "Lose a page", remove=(path,))
    one = verify_revision(corpus, "HEAD", jobs=1)
    monkeypatch.setattr(verify_mod, "PARALLEL_MIN_DOCS", 2)
    two = verify_revision(corpus, "HEAD", jobs=2)
    assert one.workers == 1 and two.workers == 2
    assert not one.ok and one.problems == two.problems
    assert {k: v for k, v in one.to_dict().items() if k != "workers"} == \
        {k: v for k, v in two.to_dict().items() if k != "workers"}


def test_batches_pack_loose_objects(tmp_path, contract_text):
    init_index(tmp_path / "idx")
    _git(tmp_path / "idx", "config", "gc.auto", "50")  # Git's default is 6,700 loose objects
    paths = _copies(contract_text, tmp_path / "docs", ["p1", "p2", "p3"])
    with IndexRepo(tmp_path / "idx") as repo:
        compile_many(repo, [str(p) for p in paths], Settings(), jobs=1)
    counts = dict(line.split(": ") for line in _git(tmp_path / "idx", "count-objects", "-v").splitlines())
    assert int(counts["packs"]) >= 1 and int(counts["in-pack"]) > 150
    assert int(counts["count"]) < 50
    _git(tmp_path / "idx", "fsck", "--strict")


def test_objects_already_in_a_pack_are_not_written_again(tmp_path, contract_text):
    """A recompile after `git gc` re-creates blobs that only a pack holds: they are not stored twice."""
    import hashlib

    from hti_git import store

    init_index(tmp_path / "idx")
    [path] = _copies(contract_text, tmp_path / "docs", ["p1"])
    with IndexRepo(tmp_path / "idx") as repo:
        compile_path(repo, str(path), Settings(), method="fast")
        _git(tmp_path / "idx", "repack", "-a", "-d", "-q")
        _git(tmp_path / "idx", "prune-packed")
        data = repo.snapshot().read_text("p1/source.txt").encode()
        binsha = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
        new = b"a blob no pack holds\n"
        new_sha = hashlib.sha1(b"blob %d\0" % len(new) + new).digest()
        store._write_objects(repo.repo, repo, {binsha: (b"blob", data), new_sha: (b"blob", new)})
        loose = tmp_path / "idx" / ".git" / "objects"
        assert not (loose / binsha.hex()[:2] / binsha.hex()[2:]).exists()
        assert (loose / new_sha.hex()[:2] / new_sha.hex()[2:]).exists()


def test_uncommitted_edit_of_the_catalogue_is_never_overwritten(corpus, tmp_path, contract_text):
    (corpus.root / CATALOG_FILE).write_text("my own notes\n")
    [path] = _copies(contract_text, tmp_path / "more", ["delta-deed"])
    out = run("-C", corpus.root, "compile", path, code=1).output
    assert "catalog.jsonl has uncommitted changes" in out
    assert (corpus.root / CATALOG_FILE).read_text() == "my own notes\n"
    assert read_catalog(corpus.snapshot("HEAD")).docs == ["alpha-lease", "beta-supply", "gamma-licence"]
