"""store.py against real Git repositories: snapshots, atomic commits, locks, bare repos."""

from __future__ import annotations

import subprocess
import threading

import git
import pytest

from hti_git.errors import DirtyTreeError, LockedError, StoreError
from hti_git.store import IndexRepo, init_repository


def _git(path, *args) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path):
    r, created, _ = init_repository(tmp_path / "idx", {"hti.yaml": b"method: fast\n"}, "init")
    assert created
    yield r
    r.close()


def test_commit_writes_one_commit_and_syncs_worktree(repo):
    with repo.lock():
        result = repo.commit({"doc/index.md": b"root\n", "doc/a/b.md": b"b\n"}, "compile doc",
                             {"HTI-Doc": "doc"}, replace_dirs=("doc",))
    assert result.sha and result.branch == "main"
    assert set(result.changed) == {"doc/index.md", "doc/a/b.md"}
    assert (repo.root / "doc/a/b.md").read_bytes() == b"b\n"
    assert _git(repo.root, "status", "--porcelain") == ""
    assert repo.log()[0]["trailers"] == {"HTI-Doc": "doc"}


def test_replace_dir_removes_stale_pages_and_same_tree_commits_nothing(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"1\n", "doc/old.md": b"old\n"}, "one", replace_dirs=("doc",))
        second = repo.commit({"doc/index.md": b"1\n"}, "two", replace_dirs=("doc",))
        third = repo.commit({"doc/index.md": b"1\n"}, "three", replace_dirs=("doc",))
    assert second.changed == ("doc/old.md",)
    assert not (repo.root / "doc/old.md").exists()
    assert third.sha is None
    assert _git(repo.root, "status", "--porcelain") == ""


def test_snapshot_reads_old_revisions_without_checkout(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
        repo.commit({"doc/index.md": b"v2\n"}, "v2")
    assert repo.snapshot("HEAD~1").read_text("doc/index.md") == "v1\n"
    assert repo.snapshot("HEAD").read_text("doc/index.md") == "v2\n"
    assert (repo.root / "doc/index.md").read_text() == "v2\n"
    with pytest.raises(StoreError, match="unknown revision"):
        repo.snapshot("no-such-branch")


def test_commit_to_other_branch_leaves_checkout_alone(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"main\n"}, "main")
        before = _git(repo.root, "rev-parse", "HEAD")
        result = repo.commit({"doc/index.md": b"other\n"}, "other", branch="hti/doc/x")
    assert result.created_branch and result.branch == "hti/doc/x"
    assert _git(repo.root, "rev-parse", "HEAD") == before
    assert (repo.root / "doc/index.md").read_text() == "main\n"
    assert repo.snapshot("hti/doc/x").read_text("doc/index.md") == "other\n"
    assert _git(repo.root, "status", "--porcelain") == ""


def test_crash_before_ref_move_changes_nothing(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
    head = _git(repo.root, "rev-parse", "HEAD")
    index = (repo.git_dir / "index").read_bytes()

    def boom():
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError), repo.lock():
        repo.commit({"doc/index.md": b"v2\n", "doc/new.md": b"n\n"}, "v2", before_ref_move=boom)
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert (repo.git_dir / "index").read_bytes() == index
    assert (repo.root / "doc/index.md").read_text() == "v1\n"
    assert not (repo.root / "doc/new.md").exists()
    assert _git(repo.root, "status", "--porcelain") == ""
    with repo.lock():  # the next writer discards the journal of the dead commit
        pass
    assert not (repo.hti_dir / "journal.json").exists()


def test_journal_rolls_forward_after_crash_between_ref_move_and_worktree(repo, monkeypatch):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
    monkeypatch.setattr(IndexRepo, "_sync_worktree", lambda self, sha, paths, written=None: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError), repo.lock():
        repo.commit({"doc/index.md": b"v2\n"}, "v2")
    monkeypatch.undo()
    assert (repo.hti_dir / "journal.json").exists()
    with repo.lock():  # recovery finishes the sync
        pass
    assert (repo.root / "doc/index.md").read_text() == "v2\n"
    assert _git(repo.root, "status", "--porcelain") == ""


def test_dirty_document_folder_is_refused(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
    (repo.root / "doc/index.md").write_text("my edit\n")
    head = _git(repo.root, "rev-parse", "HEAD")
    with pytest.raises(DirtyTreeError, match="uncommitted"), repo.lock():
        repo.commit({"doc/index.md": b"v2\n"}, "v2", require_clean=("doc",))
    assert _git(repo.root, "rev-parse", "HEAD") == head
    assert (repo.root / "doc/index.md").read_text() == "my edit\n"


def test_unrelated_dirty_files_survive_a_commit(repo):
    (repo.root / "notes.txt").write_text("mine\n")
    (repo.root / "hti.yaml").write_text("method: fast\n# edited\n")
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1", require_clean=("doc",))
    assert (repo.root / "notes.txt").read_text() == "mine\n"
    assert "edited" in (repo.root / "hti.yaml").read_text()


def test_second_writer_waits_then_fails(repo):
    held = threading.Event()
    release = threading.Event()

    def holder():
        other = IndexRepo(repo.root)
        with other.lock():
            held.set()
            release.wait(5)
        other.close()

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        with pytest.raises(LockedError, match="another hti-git process"), repo.lock(timeout=0.2):
            pass
    finally:
        release.set()
        t.join()


def test_bare_repository_can_be_read(repo, tmp_path):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
    bare = tmp_path / "bare.git"
    git.Repo.clone_from(str(repo.root), str(bare), bare=True).close()
    with IndexRepo(bare) as r:
        assert r.bare
        assert r.snapshot("HEAD").read_text("doc/index.md") == "v1\n"
        assert r.snapshot("main").blob_shas("doc") == {"doc/index.md": repo.snapshot().blob_shas("doc")["doc/index.md"]}


def test_unsafe_paths_are_refused(repo):
    with pytest.raises(StoreError, match="unsafe path"), repo.lock():
        repo.commit({"../escape.md": b"x"}, "bad")
    with pytest.raises(StoreError, match="unsafe path"), repo.lock():
        repo.commit({"doc/.git/config": b"x"}, "bad")


def test_init_is_idempotent_and_adopts_existing_repos(tmp_path):
    path = tmp_path / "existing"
    git.Repo.init(path).close()
    (path / "hti.yaml").write_text("method: fast\n")  # a user's own file is kept, not overwritten
    r, created, first = init_repository(path, {"hti.yaml": b"default\n", "x.md": b"x\n"}, "init")
    r.close()
    assert not created and first.sha
    assert (path / "hti.yaml").read_text() == "method: fast\n"
    r, _, second = init_repository(path, {"hti.yaml": b"default\n", "x.md": b"x\n"}, "init")
    r.close()
    assert second.sha is None
    assert _git(path, "rev-list", "--count", "HEAD").strip() == "1"


def test_a_commit_that_lands_before_the_ref_move_is_kept_and_the_compile_refuses(tmp_path, contract_text):
    """Compare-and-swap: another writer (plain git, which takes no hti-git lock) commits on the branch
    after the compile read it and before it moves the ref. The compile must refuse and keep that
    commit; moving the branch without the old value would silently drop it."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings
    from hti_git.errors import StoreError
    from hti_git.workspace import init_index

    init_index(tmp_path / "idx")
    repo = IndexRepo(tmp_path / "idx")
    other = {}

    def someone_else_commits():
        (tmp_path / "idx" / "NOTES.md").write_text("a colleague's note\n")
        subprocess.run(["git", "-C", str(tmp_path / "idx"), "add", "NOTES.md"], check=True)
        subprocess.run(["git", "-C", str(tmp_path / "idx"), "commit", "-qm", "note"], check=True)
        other["sha"] = subprocess.run(["git", "-C", str(tmp_path / "idx"), "rev-parse", "HEAD"], check=True,
                                      capture_output=True, text=True).stdout.strip()

    with pytest.raises(StoreError, match="moved while committing"):
        compile_path(repo, contract_text, Settings(), before_ref_move=someone_else_commits)
    head = subprocess.run(["git", "-C", str(tmp_path / "idx"), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert head == other["sha"]  # the colleague's commit is kept
    assert not any(p.startswith("slingerbag") for p in repo.snapshot("HEAD").blob_shas(""))
    repo.close()


def test_an_object_reader_that_fails_mid_read_starts_fresh_and_answers_right(tmp_path):
    """A read interrupted part-way (its replies unread in the pipe) must not answer the next
    request with the wrong objects: the process is stopped and the next read starts a new one."""
    import subprocess

    from hti_git.store import ObjectReader

    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)

    def blob(data: bytes) -> str:
        return subprocess.run(["git", "-C", str(tmp_path / "r"), "hash-object", "-w", "--stdin"], input=data,
                              capture_output=True, check=True).stdout.decode().strip()

    a, b = blob(b"a"), blob(b"b")
    reader = ObjectReader(tmp_path / "r" / ".git")
    real = reader._read

    def fail_after_sending(shas):
        proc = reader._start()
        proc.stdin.write(f"{a}\n{a}\n".encode())  # requests sent, replies never read
        proc.stdin.flush()
        raise KeyboardInterrupt

    reader._read = fail_after_sending
    with pytest.raises(KeyboardInterrupt):
        reader.read([a, a])
    reader._read = real
    assert reader.read([b]) == [("blob", b"b")]
    reader.close()


def test_exists_answers_for_files_and_folders_from_the_folders_file_list(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"root\n", "doc/a/b/c.md": b"c\n", "top.md": b"t\n"}, "one")
    snap = repo.snapshot()
    assert all(snap.exists(p) for p in ("doc", "doc/index.md", "doc/a", "doc/a/b", "doc/a/b/c.md", "top.md", "/doc/a/"))
    assert not any(snap.exists(p) for p in ("nope", "doc/nope.md", "doc/a/b/c", "doc/a/b/c.md/x", "top.md/x", "do"))


def test_prefetched_pages_are_the_pages_read_one_by_one(repo):
    page = b"---\nhti: 1\nkind: subject\ntitle: A\n---\n\n# A\n"
    with repo.lock():
        repo.commit({"doc/index.md": page, "doc/s/a.md": page, "doc/broken.md": b"---\ntitle: [\n"}, "one")
    one, bulk = repo.snapshot(), repo.snapshot()
    bulk.prefetch_pages("doc")  # a broken page is left for whoever asks for it
    assert bulk.page("doc/s/a.md").meta == one.page("doc/s/a.md").meta and bulk.page("doc/index.md").title == "A"
    with pytest.raises(Exception, match="broken.md"):
        bulk.page("doc/broken.md")


def test_derived_data_is_named_by_the_folders_content_under_the_git_directory(repo):
    with repo.lock():
        repo.commit({"doc/index.md": b"v1\n"}, "v1")
        repo.commit({"doc/index.md": b"v2\n", "other/x.md": b"x\n"}, "v2")
    old, new = repo.snapshot("HEAD~1").derived_path("doc", "x"), repo.snapshot().derived_path("doc", "x")
    assert old != new and old.parent == new.parent == repo.git_dir / "hti" / "derived"
    assert repo.snapshot().derived_path("nope", "x") is None and repo.snapshot().derived_path("doc/index.md", "x") is None
