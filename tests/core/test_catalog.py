"""The catalogue (catalog/XX.jsonl shards): written with each compile (only the shards it touches),
deterministic, read instead of root pages, repaired when stale or missing, checked by verify; an
index from before shards (one catalog.jsonl) is read and migrated; and the commands that lean on it."""

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
from hti_git.index.catalog import CATALOG_DIR, LEGACY_FILE, parse_catalog, read_catalog, shard_path
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


def _shards(snap) -> dict[str, bytes]:
    return {p: snap.read_bytes(p) for p in snap.blob_shas(CATALOG_DIR)}


def _entries(snap) -> dict[str, dict]:
    """Every stored entry, each shard parsed on its own (problems must be none)."""
    out = {}
    for path, data in _shards(snap).items():
        entries, problems = parse_catalog(data, path)
        assert not problems
        out.update(entries)
    return out


def _commit(repo, files, message="Hand edit", **kwargs):
    with repo.lock():
        return repo.commit(files, message, **kwargs).sha


def test_compile_writes_the_catalogue_in_the_same_commit(compiled_repo):
    snap = compiled_repo.snapshot("HEAD")
    changed = _git(compiled_repo.root, "show", "--name-only", "--format=", "HEAD").split()
    [shard] = [p for p in changed if p.startswith(CATALOG_DIR + "/")]
    assert any(p.endswith("/index.md") for p in changed)
    header, line = snap.read_text(shard).splitlines()
    assert json.loads(header) == {"documents": 1, "hti_catalog": 2}
    entry = json.loads(line)
    doc = entry["doc"]
    assert shard == shard_path(doc) and len(shard) == len("catalog/00.jsonl")
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
            blobs.append(_shards(repo.snapshot("HEAD")))
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
    _commit(corpus, {}, "An index from before catalogues", remove=(CATALOG_DIR,))
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
    entries = _entries(corpus.snapshot("HEAD"))
    assert sorted(entries) == ["alpha-lease", "beta-supply", "delta", "gamma-licence"]
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
    alpha, beta = shard_path("alpha-lease"), shard_path("beta-supply")
    assert f"{alpha}: catalog: lists alpha-lease, which is not an index at this revision" in lines
    assert f"{shard_path('omega')}: catalog: omega is not listed" in lines
    # a hand-edited entry (tree id unchanged, so readers trust it): verify names the field
    entries, _ = parse_catalog(snap.read_bytes(beta), beta)
    entries["beta-supply"]["title"] = "Something else"
    _commit(corpus, {beta: catalog_mod.render_catalog(entries)}, "Edit the catalogue")
    report = verify_snapshot(corpus.snapshot("HEAD"), ["beta-supply"])
    assert [p.line() for p in report.problems] == [
        f"{alpha}: catalog: lists alpha-lease, which is not an index at this revision",
        f"{beta}: catalog: entry for beta-supply does not match its root page [title]"]


def test_duplicate_lines_from_a_union_merge_are_dropped_and_rebuilt(corpus):
    shard = shard_path("beta-supply")
    lines = corpus.snapshot("HEAD").read_bytes(shard).decode().splitlines()
    beta = next(line for line in lines if '"doc":"beta-supply"' in line)
    twice = "\n".join(lines + [beta.replace('"pages":', '"pages":1') ]) + "\n"
    _commit(corpus, {shard: twice.encode()}, "A merge left two lines")
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
    shard = corpus.root / shard_path("delta-deed")
    shard.parent.mkdir(exist_ok=True)
    shard.write_text("my own notes\n")
    [path] = _copies(contract_text, tmp_path / "more", ["delta-deed"])
    out = run("-C", corpus.root, "compile", path, code=1).output
    assert "catalog has uncommitted changes" in out
    assert shard.read_text() == "my own notes\n"
    assert read_catalog(corpus.snapshot("HEAD")).docs == ["alpha-lease", "beta-supply", "gamma-licence"]


def test_a_compile_rewrites_only_its_documents_shard(corpus, tmp_path, contract_text):
    """One commit per document into a large corpus must not rewrite every document's line."""
    before = _shards(corpus.snapshot("HEAD"))
    [path] = _copies(contract_text, tmp_path / "more", ["delta-deed"])
    run("-C", corpus.root, "compile", path)
    changed = _git(corpus.root, "show", "--name-only", "--format=", "HEAD").split()
    assert [p for p in changed if p.startswith(CATALOG_DIR)] == [shard_path("delta-deed")]
    after = _shards(corpus.snapshot("HEAD"))
    assert {p: b for p, b in after.items() if p != shard_path("delta-deed")} == \
        {p: b for p, b in before.items() if p != shard_path("delta-deed")}
    assert sorted(_entries(corpus.snapshot("HEAD"))) == ["alpha-lease", "beta-supply", "delta-deed", "gamma-licence"]
    assert verify_snapshot(corpus.snapshot("HEAD")).catalog == "current"


def test_an_index_with_one_catalogue_file_is_read_and_migrated(corpus, tmp_path, contract_text):
    """An index compiled before shards has one catalog.jsonl: read as it is; its next compile
    writes every shard and removes the old file."""
    entries = _entries(corpus.snapshot("HEAD"))
    _commit(corpus, {LEGACY_FILE: catalog_mod.render_catalog(entries)}, "Before shards", remove=(CATALOG_DIR,))
    snap = corpus.snapshot("HEAD")
    cat = read_catalog(snap)
    assert cat.legacy and cat.current and cat.entries == entries
    assert verify_snapshot(snap).catalog == "current"
    [path] = _copies(contract_text, tmp_path / "more", ["delta-deed"])
    run("-C", corpus.root, "compile", path)
    snap = corpus.snapshot("HEAD")
    assert LEGACY_FILE not in snap.root_entries() and not (corpus.root / LEGACY_FILE).exists()
    assert sorted(_entries(snap)) == ["alpha-lease", "beta-supply", "delta-deed", "gamma-licence"]
    assert (corpus.root / shard_path("alpha-lease")).exists()
    assert read_catalog(snap).current and not read_catalog(snap).legacy


def test_an_entry_in_the_wrong_shard_is_reported_and_rebuilt(corpus):
    snap = corpus.snapshot("HEAD")
    beta = shard_path("beta-supply")
    wrong = next(f"{CATALOG_DIR}/{n:02x}.jsonl" for n in range(256) if f"{CATALOG_DIR}/{n:02x}.jsonl" != beta)
    line = next(x for x in snap.read_text(beta).splitlines() if '"doc":"beta-supply"' in x)
    _commit(corpus, {wrong: (line + "\n").encode(), beta: catalog_mod.render_catalog({})}, "Misfiled by hand")
    cat = read_catalog(corpus.snapshot("HEAD"))
    assert "beta-supply" in cat.rebuilt and cat.entries["beta-supply"] == json.loads(line)
    assert any(f"lists beta-supply, which belongs in {beta}" in m for m in cat.invalid)


def test_a_document_named_exactly_reads_only_its_shard(corpus, monkeypatch):
    """`ask --doc NAME` and `show NAME` in a corpus of 10,000 must not parse every entry."""
    from hti_git.index import tree as tree_mod

    asked = []
    real = catalog_mod.read_catalog

    def spy(snapshot, shards=None):
        asked.append(shards)
        return real(snapshot, shards)

    monkeypatch.setattr(catalog_mod, "read_catalog", spy)
    snap = corpus.snapshot("HEAD")
    assert requested_documents(snap, ["beta-supply"]) == (["beta-supply"], ["beta-supply"])
    assert tree_mod.resolve_document(snap, "gamma-licence") == "gamma-licence"
    assert asked == [{shard_path("beta-supply")}, {shard_path("gamma-licence")}]
    # a prefix or a typo still reads the whole catalogue, to match or suggest names
    assert requested_documents(snap, ["beta"])[1] == ["beta-supply"]
    assert asked[-1] is None


def test_a_document_cannot_be_named_like_the_catalogue_folder(tmp_path, contract_text):
    from hti_git.index.slug import doc_slug

    assert doc_slug("catalog.pdf") == "catalog-1" and doc_slug("Catalog.txt") == "catalog-1"
    init_index(tmp_path / "idx")
    [path] = _copies(contract_text, tmp_path / "docs", ["catalog"])
    with IndexRepo(tmp_path / "idx") as repo:
        result = compile_path(repo, path, Settings())
        assert result.doc == "catalog-1"
        assert read_catalog(repo.snapshot("HEAD")).docs == ["catalog-1"]
