"""The only module that talks to Git.

Reads pages at any revision straight from Git objects (no checkout, works in bare repositories),
and writes a compile as: all blobs and trees into the object database (in-process, no process per
blob) -> one commit object -> compare-and-swap of the branch ref -> index and working tree synced
for the paths that changed. Until the ref moves nothing visible has changed; a journal under
`.git/hti/` lets the next run finish syncing the working tree if a process died after the move.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import git
from git.objects.fun import tree_to_stream

from hti_git.errors import DirtyTreeError, LockedError, NotARepositoryError, PageFormatError, StoreError
from hti_git.index.page import Page, parse_page

ZERO_SHA = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
BLOB_MODE = 0o100644
TREE_MODE = 0o040000
HTI_DIR = "hti"
JOURNAL = "journal.json"
# Test-only fault injection (tests/reliability, bench/soak.py): HTI_FAULT=<point>:<action> makes
# commit() stop at a named point, so a crash can be placed exactly. Points: before-ref-move (all
# objects written, ref not moved), after-ref-move (ref moved, working tree not synced), mid-sync (one
# file of the working tree synced; fires per file). Actions: kill (SIGKILL itself) or sleep=<seconds> (after printing
# "hti-fault: <point>" on stderr, so a test knows where the process is). Unset: no effect.
FAULT_ENV = "HTI_FAULT"


def _fault(point: str) -> None:
    spec = os.environ.get(FAULT_ENV)
    if not spec or spec.partition(":")[0] != point:
        return
    action = spec.partition(":")[2]
    sys.stderr.write(f"hti-fault: {point}\n")
    sys.stderr.flush()
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action.startswith("sleep="):
        time.sleep(float(action.removeprefix("sleep=")))


@dataclass(frozen=True)
class CommitResult:
    """What a commit did: its sha (None when nothing changed), the branch and the changed paths."""

    sha: str | None
    branch: str
    changed: tuple[str, ...]
    created_branch: bool = False


# in the Git directory, beside the response cache: data rebuilt from a revision's objects (`Snapshot.derived`)
DERIVED_DIR = "hti/derived"


class ObjectReader:
    """Reads many Git objects through one `git cat-file --batch` process (started on first use).

    GitPython resolves a path tree by tree in Python and asks for each object separately; a full
    verify reads about a hundred files for each of thousands of documents. Requests go out in
    chunks small enough to sit in the pipe while Git answers the earlier ones, so neither side can
    block the other.
    """

    CHUNK = 256  # ids a request: ~10 KB of input, well under a pipe's buffer

    def __init__(self, git_dir: str | Path, git_exe: str = "git"):
        self.git_dir = str(git_dir)
        self.git_exe = git_exe
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()  # one request and its replies at a time on the shared pipe

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([self.git_exe, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env={**os.environ, "GIT_DIR": self.git_dir})
        return self._proc

    def read(self, shas: list[str]) -> list[tuple[str, bytes]]:
        """(type, bytes) of each object, in order; ('missing', b'') for an id the repository lacks.
        A read that fails part-way stops the process (its unread replies would answer the next
        request), so the next read starts a fresh one."""
        with self._lock:
            try:
                return self._read(shas)
            except BaseException:
                self._stop(kill=True)
                raise

    def _read(self, shas: list[str]) -> list[tuple[str, bytes]]:
        proc = self._start()
        out: list[tuple[str, bytes]] = []
        for first in range(0, len(shas), self.CHUNK):
            chunk = shas[first:first + self.CHUNK]
            proc.stdin.write(("\n".join(chunk) + "\n").encode("ascii"))
            proc.stdin.flush()
            for _ in chunk:
                header = proc.stdout.readline().split()
                if len(header) != 3:  # "<id> missing" (or "<id> ambiguous")
                    if not header:
                        raise StoreError("git cat-file stopped answering")
                    out.append(("missing", b""))
                    continue
                size = int(header[2])
                data = proc.stdout.read(size + 1)[:size]  # each object ends with a newline
                out.append((header[1].decode("ascii"), data))
        return out

    def close(self) -> None:
        with self._lock:
            self._stop(kill=False)

    def _stop(self, kill: bool) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if kill:
                proc.kill()
            proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError):
            proc.stdout.close()


def parse_tree(data: bytes) -> list[tuple[bytes, str, str]]:
    """(mode, name, hex id) of each entry of a raw tree object."""
    out = []
    i, end = 0, len(data)
    while i < end:
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        out.append((data[i:space], data[space + 1:nul].decode("utf-8", "surrogateescape"), data[nul + 1:nul + 21].hex()))
        i = nul + 21
    return out


class Snapshot:
    """The files of one commit, read lazily from Git objects and cached per path."""

    def __init__(self, repo: git.Repo, commit: git.Commit | None, rev: str, reader: ObjectReader | None = None):
        self._repo = repo
        self.commit = commit
        self.rev = rev
        self.sha = commit.hexsha if commit is not None else None
        self._pages: dict[str, Page] = {}
        self._text: dict[str, str] = {}
        self._root: dict[str, tuple[str, str]] | None = None
        self._folders: dict[str, dict[str, str]] = {}  # top-level folder -> its files' blob ids
        self._dirs: dict[str, set[str]] = {}  # top-level folder -> the folders below it
        self._catalog = None
        self._reader = reader
        self._own_reader = False

    @property
    def objects(self) -> ObjectReader:
        """The bulk object reader (the repository's, or one of this snapshot's own)."""
        if self._reader is None:
            self._reader = ObjectReader(self._repo.git_dir, self._repo.git.GIT_PYTHON_GIT_EXECUTABLE or "git")
            self._own_reader = True
        return self._reader

    def close(self) -> None:
        """Stop this snapshot's own object reader, if it started one."""
        if self._own_reader and self._reader is not None:
            self._reader.close()
            self._reader = None

    def files(self, prefix: str) -> dict[str, str]:
        """Every file under the folder `prefix` -> its blob id, sorted by path: the folder's trees
        read level by level in bulk (a few round trips for a document of a hundred files)."""
        if self.commit is None:
            return {}
        prefix = prefix.strip("/")
        top = self.root_entries().get(prefix) if "/" not in prefix else None
        if top is not None:
            tree = top[1] if top[0] == "tree" else None
        else:
            item = self._item(prefix) if prefix else self.commit.tree
            tree = item.hexsha if item is not None and item.type == "tree" else None
        if tree is None:
            return {}
        found: dict[str, str] = {}
        level = [(prefix, tree)]
        while level:
            raw = self.objects.read([sha for _, sha in level])
            below = []
            for (path, _), (kind, data) in zip(level, raw):
                if kind != "tree":
                    raise StoreError(f"tree {path or '/'} is missing at {self.rev}")
                for mode, name, sha in parse_tree(data):
                    full = f"{path}/{name}" if path else name
                    if mode == b"40000":
                        below.append((full, sha))
                    elif mode != b"160000":  # a submodule's commit is not a file
                        found[full] = sha
            level = below
        return dict(sorted(found.items()))

    def read_blobs(self, shas: list[str]) -> list[bytes]:
        """The bytes of each blob id, in order, through one `git cat-file --batch`."""
        out = []
        for sha, (kind, data) in zip(shas, self.objects.read(shas)):
            if kind != "blob":
                raise StoreError(f"no blob {sha} at {self.rev}")
            out.append(data)
        return out

    def _item(self, path: str):
        """The Git object at `path`, found from the top-level entries (GitPython would parse the
        whole root tree, 10,000 entries in a large corpus, for every first lookup)."""
        if self.commit is None:
            return None
        top, _, rest = path.strip("/").partition("/")
        entry = self.root_entries().get(top)
        if entry is None:
            return None
        kind, sha = entry
        obj = (git.Tree if kind == "tree" else git.Blob)(self._repo, bytes.fromhex(sha), path=top)
        if not rest:
            return obj
        if kind != "tree":
            return None
        try:
            return obj / rest
        except KeyError:
            return None

    def exists(self, path: str) -> bool:
        """Whether a file or folder is at `path`, from its top-level folder's file list (read once: a
        walk over a document's pages asks this of each; GitPython's tree lookups parse every tree on the
        way, each time)."""
        p = path.strip("/")
        top, _, rest = p.partition("/")
        entry = self.root_entries().get(top)
        if entry is None or not rest:
            return entry is not None
        if entry[0] != "tree":
            return False
        files = self._folder(top)
        if p in files:
            return True
        if top not in self._dirs:
            self._dirs[top] = {f.rsplit("/", k)[0] for f in files for k in range(1, f.count("/") + 1)}
        return p in self._dirs[top]

    def _folder(self, top: str) -> dict[str, str]:
        """The files of a top-level folder and their blob ids (listed once)."""
        if top not in self._folders:
            self._folders[top] = self.files(top)
        return self._folders[top]

    def derived_path(self, folder: str, name: str) -> Path | None:
        """Where to keep data derived from a top-level folder's content at this revision (a search
        index built from its pages): under the Git directory, named by the folder's tree id, so it is
        never stale and never committed. None when the folder is not a tree here."""
        entry = self.root_entries().get(folder.strip("/"))
        if self.commit is None or entry is None or entry[0] != "tree":
            return None
        return Path(self._repo.git_dir) / DERIVED_DIR / f"{entry[1]}-{name}"

    def derived(self, folder: str, name: str, build: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
        """An object derived from a top-level folder's content (a search index built from its pages):
        the one kept under `derived_path` when `valid` accepts it, else `build()`, kept for the next
        reader (by rename: a reader sees no file or a whole one; failing to keep it costs only a rebuild).
        A damaged file is rebuilt."""
        path = self.derived_path(folder, name)
        if path is not None and path.exists():
            try:
                with path.open("rb") as f:
                    kept = pickle.load(f)
                if valid(kept):
                    return kept
            except Exception:  # a damaged or foreign file: rebuilt below
                pass
        value = build()
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)  # one per writer
                with os.fdopen(fd, "wb") as f:
                    pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, path)
            except OSError:
                pass
        return value

    def prefetch_pages(self, prefix: str) -> None:
        """Read and parse every page (.md) under `prefix` in one batch: a search over all of a
        document's pages then costs one `git cat-file` round trip, not one a page."""
        top = prefix.strip("/").partition("/")[0]
        if top not in self.root_entries() or self.root_entries()[top][0] != "tree":
            return
        wanted = [(path, sha) for path, sha in self._folder(top).items()
                  if path.startswith(prefix.strip("/") + "/") and path.endswith(".md") and path not in self._pages]
        for (path, _), data in zip(wanted, self.read_blobs([sha for _, sha in wanted])):
            try:
                self._pages[path] = parse_page(path, data)
            except PageFormatError:
                continue  # reported when the page itself is asked for

    def read_bytes(self, path: str) -> bytes:
        """Raw bytes of a file at this revision. Its blob id comes from its top-level folder's file
        list (read once, in bulk: a question reads many pages of one document)."""
        top, _, rest = path.strip("/").partition("/")
        if rest:
            sha = self._folder(top).get(path.strip("/"))
        else:
            entry = self.root_entries().get(top)
            sha = entry[1] if entry is not None and entry[0] == "blob" else None
        if sha is None:
            raise StoreError(f"no file {path!r} at {self.rev}")
        return self.read_blobs([sha])[0]

    def read_text(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = self.read_bytes(path).decode("utf-8")
        return self._text[path]

    def page(self, path: str) -> Page:
        """The parsed page at `path` (cached)."""
        if path not in self._pages:
            self._pages[path] = parse_page(path, self.read_bytes(path))
        return self._pages[path]

    def blob_shas(self, prefix: str = "") -> dict[str, str]:
        """Every file under `prefix` mapped to its blob sha, without reading any blob."""
        return self.files(prefix)

    def list_dir(self, path: str = "") -> list[tuple[str, str]]:
        """(name, 'blob'|'tree') entries of a folder at this revision."""
        tree = self.commit.tree if (self.commit is not None and not path) else self._item(path)
        if tree is None or tree.type != "tree":
            return []
        return [(item.name, item.type) for item in tree]

    def root_entries(self) -> dict[str, tuple[str, str]]:
        """Top-level entries of this revision: name -> ('blob'|'tree', sha), from one tree object."""
        if self._root is None:
            self._root = {}
            if self.commit is not None:  # parsed here: GitPython's tree objects cost 30 us an entry
                [(kind, data)] = self.objects.read([self.commit.tree.hexsha])
                if kind != "tree":
                    raise StoreError(f"the top-level tree of {self.rev} is missing")
                for mode, name, sha in parse_tree(data):
                    if mode != b"160000":  # a submodule's commit is not a file
                        self._root[name] = ("tree" if mode == b"40000" else "blob", sha)
        return self._root

    def catalog(self):
        """The documents at this revision from the catalogue (index/catalog.py), read once."""
        if self._catalog is None:
            from hti_git.index.catalog import read_catalog

            self._catalog = read_catalog(self)
        return self._catalog

    def docs(self) -> list[str]:
        """Folders at the top level that hold a compiled index (index.md and source.txt), sorted.

        Read from the catalogue, checked against the top-level tree (see index/catalog.py).
        """
        return self.catalog().docs


class IndexRepo:
    """An index repository: a Git repository (bare or not) plus hti-git's state in .git/hti/."""

    def __init__(self, path: str | Path = ".", search_parent_directories: bool = True):
        if not Path(path).exists():
            raise NotARepositoryError(f"{path}: no such directory")
        if not Path(path).is_dir():
            raise NotARepositoryError(f"{path}: not a directory")
        try:
            self.repo = git.Repo(path, search_parent_directories=search_parent_directories)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise NotARepositoryError(
                f"{Path(path).resolve()} is not a Git repository (run 'hti-git init' first)"
            ) from None
        self.bare = self.repo.bare
        self.root = Path(self.repo.git_dir if self.bare else self.repo.working_tree_dir)
        self.git_dir = Path(self.repo.git_dir)
        self.hti_dir = self.git_dir / HTI_DIR
        self._objects: ObjectReader | None = None  # one `git cat-file --batch` for this repository's snapshots

    def close(self) -> None:
        if self._objects is not None:
            self._objects.close()
        self.repo.close()

    def __enter__(self) -> IndexRepo:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------------------

    def resolve(self, rev: str = "HEAD") -> git.Commit | None:
        """The commit `rev` names; None for HEAD of a repository without commits."""
        try:
            return self.repo.commit(rev)
        except (git.BadName, ValueError, git.BadObject) as exc:
            if rev == "HEAD" and not self.has_commits():
                return None
            raise StoreError(f"unknown revision {rev!r}") from exc

    @property
    def objects(self) -> ObjectReader:
        """The repository's one bulk object reader (started on first use, stopped by close())."""
        if self._objects is None:
            self._objects = ObjectReader(self.git_dir, self.repo.git.GIT_PYTHON_GIT_EXECUTABLE or "git")
        return self._objects

    def snapshot(self, rev: str = "HEAD") -> Snapshot:
        """The index as of `rev` (commit, branch, tag or expression like HEAD~2)."""
        return Snapshot(self.repo, self.resolve(rev), rev, self.objects)

    def has_commits(self) -> bool:
        try:
            self.repo.head.commit  # noqa: B018
            return True
        except ValueError:
            return False

    def current_branch(self) -> str | None:
        """The checked-out branch name, or None when HEAD is detached."""
        try:
            ref = self.repo.head.reference
        except TypeError:
            return None
        return ref.name if ref.path.startswith("refs/heads/") else None

    def branch_exists(self, name: str) -> bool:
        return f"refs/heads/{name}" in {ref.path for ref in self.repo.branches}

    def branch_sha(self, name: str) -> str | None:
        try:
            return self.repo.git.rev_parse("--verify", "-q", f"refs/heads/{name}")
        except git.GitCommandError:
            return None

    def changed_paths(self, rev_a: str, rev_b: str, prefix: str = "") -> list[tuple[str, str]]:
        """(status, path) for files that differ between two revisions, from tree shas alone."""
        a, b = self.resolve(rev_a), self.resolve(rev_b)
        args = ["-r", "-z", "--no-renames", "--name-status", a.hexsha if a else _empty_tree(self.repo), b.hexsha]
        if prefix:
            args += ["--", prefix]
        return _name_status(self.repo.git.diff_tree(*args))

    def changed_blobs(self, rev_a: str, rev_b: str, prefix: str = "") -> list[tuple[str, str, str | None, str | None]]:
        """(status, path, blob sha at rev_a, blob sha at rev_b) for files that differ; None where absent.

        One `git diff-tree`; with the shas, a caller reads each changed blob directly (read_blob)
        instead of walking trees path by path.
        """
        a, b = self.resolve(rev_a), self.resolve(rev_b)
        args = ["-r", "-z", "--no-renames", a.hexsha if a else _empty_tree(self.repo),
                b.hexsha if b else _empty_tree(self.repo)]
        if prefix:
            args += ["--", prefix]
        fields = self.repo.git.diff_tree(*args).split("\0")
        rows = []
        for meta, path in zip(fields[0::2], fields[1::2]):
            if not meta.startswith(":"):
                continue
            _, _, old, new, status = meta[1:].split(" ")
            rows.append((status[:1], path, None if old == ZERO_SHA else old, None if new == ZERO_SHA else new))
        return rows

    def read_blob(self, sha: str) -> bytes:
        """The bytes of the blob `sha` (hex)."""
        try:
            return self.repo.odb.stream(bytes.fromhex(sha)).read()
        except (ValueError, git.BadObject) as exc:
            raise StoreError(f"no blob {sha}") from exc

    def branch_names(self) -> list[str]:
        """Local branch names (e.g. 'main', 'hti/<doc>/<label>'), sorted."""
        return sorted(ref.name for ref in self.repo.branches)

    def log(self, rev: str = "HEAD", paths: list[str] | None = None, max_count: int = 200) -> list[dict]:
        """Commits reachable from `rev` (newest first) with their message trailers parsed."""
        if self.resolve(rev) is None:
            return []
        rows = []
        for c in self.repo.iter_commits(rev, paths=paths or [], max_count=max_count):
            rows.append(
                {
                    "sha": c.hexsha,
                    "date": c.committed_datetime.isoformat(),
                    "author": c.author.name,
                    "subject": c.summary,
                    "trailers": parse_trailers(c.message),
                }
            )
        return rows

    # -- working tree state -----------------------------------------------------------------------

    def dirty_paths(self, *prefixes: str) -> list[str]:
        """Uncommitted (staged, unstaged or untracked) paths under any of `prefixes` in the working tree."""
        if self.bare or not prefixes:
            return []
        entries = self._git_output(["status", "--porcelain", "-z", "--untracked-files=all", "--",
                                    *(":(literal)" + p for p in prefixes)]).split("\0")
        paths, i = [], 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) > 3:
                paths.append(entry[3:])
                if entry[0] in "RC":
                    i += 1  # a rename or copy is followed by its original path
        return paths

    # -- locking -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, timeout: float = 10.0) -> Iterator[None]:
        """Exclusive lock for writers; waits up to `timeout` seconds, then raises LockedError.

        flock is released by the kernel when the holder dies, so a crashed compile never leaves
        a stale lock behind.
        """
        self.hti_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.hti_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockedError(
                            f"another hti-git process is writing to {self.root} "
                            f"(waited {timeout:g}s); try again when it finishes"
                        ) from None
                    time.sleep(0.05)
            self.recover()
            yield
        finally:
            os.close(fd)

    # -- writing -----------------------------------------------------------------------------------

    def commit(
        self,
        files: dict[str, bytes],
        message: str,
        trailers: dict[str, str] | None = None,
        branch: str | None = None,
        replace_dirs: tuple[str, ...] = (),
        remove: tuple[str, ...] = (),
        require_clean: tuple[str, ...] = (),
        before_ref_move: Callable[[], None] | None = None,
        derive: Callable[[Snapshot], dict[str, bytes]] | None = None,
    ) -> CommitResult:
        """Commit `files` (path -> bytes) on `branch` (default: the current one) in one commit.

        Folders in `replace_dirs` are replaced wholesale (stale pages vanish); paths in `remove`
        are deleted. Returns sha None when the tree would not change. Call under `lock()`.
        `derive(base)` returns more files computed from the base revision (the catalogue), written
        in the same commit (None for a file to remove). `before_ref_move` is a test seam for crash injection.
        """
        current = self.current_branch()
        branch = branch or current
        if branch is None:
            raise StoreError("HEAD is detached; check out a branch or pass --branch")
        if require_clean:  # one `git status` for all of them (a batch replaces hundreds of folders)
            dirty_all = self.dirty_paths(*require_clean)
            for prefix in require_clean:
                dirty = [p for p in dirty_all if p == prefix or p.startswith(prefix.rstrip("/") + "/")]
                if dirty:
                    raise DirtyTreeError(
                        f"{prefix} has uncommitted changes ({dirty[0]}{' ...' if len(dirty) > 1 else ''}); "
                        "commit or discard them first"
                    )
        old_sha = self.branch_sha(branch)
        created = old_sha is None
        if created and branch != current and self.has_commits():
            # A new branch starts from the checked-out commit, detached or not (never an orphan
            # holding only the document: hti.yaml, templates and other indexes would be lost on it).
            base = self.repo.head.commit
        else:
            base = self.repo.commit(old_sha) if old_sha else None
        base_tree = base.tree if base is not None else None

        builder = _TreeBuilder(self.repo, base_tree, self)
        for d in replace_dirs:
            builder.delete(d)
        for path in remove:
            builder.delete(path)
        if derive is not None:
            base_snapshot = Snapshot(self.repo, base, base.hexsha if base is not None else "(empty)", self.objects)
            try:
                files = {**files, **derive(base_snapshot)}
            finally:
                base_snapshot.close()
        for path, data in sorted(files.items()):
            if data is None:  # derived files may be removed (a catalogue shard left empty)
                builder.delete(path)
            else:
                builder.put(path, data)
        tree_sha = builder.write()
        if base_tree is not None and tree_sha == base_tree.hexsha:
            return CommitResult(None, branch, (), False)

        full_message = message.rstrip("\n") + "\n"
        if trailers:
            full_message += "\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
        new_commit = self._create_commit(tree_sha, full_message, [base] if base is not None else [])
        base_sha = base.hexsha if base is not None else None
        changed = tuple(
            path for _, path in self._diff_names(base_sha, new_commit.hexsha)
        )
        sync = (not self.bare) and branch == current
        if sync:
            self._write_journal({"branch": branch, "old": old_sha, "new": new_commit.hexsha, "paths": changed})
        if before_ref_move is not None:
            before_ref_move()
        _fault("before-ref-move")
        try:
            self.repo.git.update_ref(
                "-m", f"hti-git: {message.splitlines()[0]}", f"refs/heads/{branch}",
                new_commit.hexsha, old_sha or ZERO_SHA,
            )
        except git.GitCommandError as exc:
            self._clear_journal()
            raise StoreError(f"branch {branch} moved while committing; nothing was changed ({exc.stderr.strip()})") from None
        _fault("after-ref-move")
        if sync:
            self._sync_worktree(new_commit.hexsha, changed, files)
            self._clear_journal()
        return CommitResult(new_commit.hexsha, branch, changed, created)

    def _create_commit(self, tree_sha: str, message: str, parents: list[git.Commit]) -> git.Commit:
        """GitPython's commit of `tree_sha` (author, committer, dates and encoding as Git's configuration
        and environment say), its object written by this process as the trees are. GitPython would
        pipe it to a `git hash-object --stdin --literally` child; killed before writing, hti-git leaves
        that child an empty stdin, and it stores an empty commit object `git fsck` calls bogus."""
        odb = self.repo.odb
        self.repo.odb = _InProcessStore(odb, Path(self.repo.common_dir) / "objects")
        try:
            return git.Commit.create_from_tree(self.repo, tree_sha, message, parent_commits=parents, head=False)
        finally:
            self.repo.odb = odb

    def maintain(self) -> dict[str, int]:
        """Pack loose objects once there are many: Git's own thresholds, counted exactly.

        A compile writes one loose object per page and tree; unpacked, a corpus of thousands of
        documents keeps tens of thousands of loose files (and `git gc --auto` only samples one
        object folder, so it misses small repositories and fires late). Past `gc.auto` loose objects
        (Git's default 6,700; 0 turns packing off) they go into a new pack (`git repack -d`, which
        also deletes the packed loose copies); past `gc.autoPackLimit` packs (50) all packs are
        merged into one (`git repack -a -d`). Readers are never disturbed: Git swaps packs
        atomically. Returns what it did: loose objects before, packs written.
        """
        def config(key: str, default: int) -> int:
            try:
                return int(self.repo.git.config("--get", key))
            except (git.GitCommandError, ValueError):
                return default

        counts = dict(line.split(": ", 1) for line in self.repo.git.count_objects("-v").splitlines() if ": " in line)
        loose, packs = int(counts.get("count", 0)), int(counts.get("packs", 0))
        limit, pack_limit = config("gc.auto", 6700), config("gc.autoPackLimit", 50)
        done = {"loose": loose, "packed": 0, "merged": 0}
        if limit <= 0 or loose < limit:
            return done
        self._git_input(["repack", "-d", "-q"], "")
        done["packed"] = 1
        if pack_limit > 0 and packs + 1 > pack_limit:
            self._git_input(["repack", "-a", "-d", "-q"], "")
            done["merged"] = 1
        return done

    def _diff_names(self, old: str | None, new: str) -> list[tuple[str, str]]:
        out = self.repo.git.diff_tree("-r", "-z", "--no-renames", "--name-status", old or _empty_tree(self.repo), new)
        return _name_status(out)

    def _sync_worktree(self, commit_sha: str, paths: tuple[str, ...], written: dict[str, bytes] | None = None) -> None:
        """Make index and working tree match `commit_sha` for `paths` (all other paths untouched).

        `written`: the files the commit wrote (path -> bytes), when the caller has them: a changed
        path among them is synced from those bytes, any other changed path was deleted, and no
        object is read back from Git (a batch commit changes tens of thousands of paths).
        """
        if not paths:
            return
        commit = self.repo.commit(commit_sha) if written is None else None
        index_lines = []
        for path in paths:
            target = self.root / path
            if written is not None:
                data = written.get(path)
                if data is not None:
                    index_lines.append(f"{BLOB_MODE:o} {blob_sha(data)}\t{path}")
                    _write_file(target, data)
                    _fault("mid-sync")
                    continue
                blob = None
            else:
                try:
                    blob = commit.tree / path
                except KeyError:
                    blob = None
            if blob is None:
                index_lines.append(f"0 {ZERO_SHA}\t{path}")
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                _prune_empty_dirs(target.parent, self.root)
            else:
                index_lines.append(f"{blob.mode:o} {blob.hexsha}\t{path}")
                _write_file(target, blob.data_stream.read())
                _fault("mid-sync")
        self._git_input(["update-index", "--index-info"], "\n".join(index_lines) + "\n")
        with contextlib.suppress(git.GitCommandError):
            self.repo.git.update_index("-q", "--refresh")

    def _git_output(self, args: list[str], data: bytes | None = None) -> str:
        """Run one git command in this repository (`data` on its standard input); its output."""
        proc = subprocess.run(
            [self.repo.git.GIT_PYTHON_GIT_EXECUTABLE or "git", *args],
            cwd=self.root, input=data, capture_output=True,
            env={**os.environ, "GIT_DIR": str(self.git_dir)},
        )
        if proc.returncode != 0:
            raise StoreError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout.decode("utf-8", "surrogateescape")

    def _git_input(self, args: list[str], text: str) -> None:
        """Run one git command in this repository with `text` on its standard input."""
        proc = subprocess.run(
            [self.repo.git.GIT_PYTHON_GIT_EXECUTABLE or "git", *args],
            cwd=self.root, input=text.encode("utf-8"), capture_output=True,
            env={**os.environ, "GIT_DIR": str(self.git_dir)},
        )
        if proc.returncode != 0:
            raise StoreError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")

    def _write_journal(self, data: dict) -> None:
        self.hti_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.hti_dir / (JOURNAL + ".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.replace(tmp, self.hti_dir / JOURNAL)

    def _clear_journal(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.hti_dir / JOURNAL).unlink()

    def recover_if_idle(self) -> None:
        """Roll a dead compile's journal forward now, unless a writer holds the lock.

        Called when a repository is opened, so after a crash between the ref move and the working
        tree sync, any hti-git command (not only the next compile) puts index and files back in
        line with HEAD. Costs one stat when there is no journal.
        """
        if self.bare or not (self.hti_dir / JOURNAL).exists():
            return
        with contextlib.suppress(LockedError, StoreError, OSError), self.lock(timeout=0):
            pass

    def recover(self) -> bool:
        """Finish or discard a compile that died around its ref move; True if there was one."""
        path = self.hti_dir / JOURNAL
        if not path.exists():
            return False
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            self._clear_journal()
            return True
        if self.branch_sha(data["branch"]) == data["new"] and self.current_branch() == data["branch"]:
            self._sync_worktree(data["new"], tuple(data["paths"]))
        self._clear_journal()
        return True


class _InProcessStore:
    """A repository's object database whose `store` writes the object in this process (`_write_loose`);
    everything else is the database's own."""

    def __init__(self, odb: object, objects_dir: Path):
        self._odb = odb
        self._objects_dir = objects_dir

    def __getattr__(self, name: str) -> object:
        return getattr(self._odb, name)

    def store(self, istream: Any) -> Any:  # a gitdb IStream
        kind, data = istream.type, istream.read()
        kind = kind if isinstance(kind, bytes) else kind.encode("ascii")
        binsha = hashlib.sha1(b"%s %d\0" % (kind, len(data)) + data).digest()
        _write_loose(self._objects_dir, binsha.hex(), kind, data)
        istream.binsha = binsha
        return istream


class _TreeBuilder:
    """Edits a base tree in memory, expanding only the folders it touches, then writes new trees.

    Object ids are computed here (sha1 of header and bytes) and the new objects written at the end
    in this process: loose, zlib-compressed as Git writes them, or, when there are many (a batch
    commit writes tens of thousands), as one pack indexed by `git index-pack`. GitPython's own
    store starts one `git hash-object` process per object.
    """

    def __init__(self, repo: git.Repo | None, base: git.Tree | None, owner: IndexRepo | None):
        self.repo = repo
        self.owner = owner
        self.root = self._load(base)
        self.pending: dict[bytes, tuple[bytes, bytes]] = {}  # binsha -> (type, data), written by write()

    def _load(self, tree: git.Tree | None) -> dict:
        entries: dict = {}
        if tree is not None:
            for item in tree:
                entries[item.name] = ("tree" if item.type == "tree" else "blob", item.mode, item.binsha, item)
        return entries

    def _folder(self, parts: list[str], create: bool) -> dict | None:
        node = self.root
        for part in parts:
            entry = node.get(part)
            if isinstance(entry, dict):
                node = entry
                continue
            if entry is not None and entry[0] == "tree":
                expanded = self._load(entry[3])
            elif create:
                expanded = {}
            else:
                return None
            node[part] = expanded
            node = expanded
        return node

    def _add(self, kind: bytes, data: bytes) -> bytes:
        binsha = hashlib.sha1(b"%s %d\0" % (kind, len(data)) + data).digest()
        self.pending.setdefault(binsha, (kind, data))
        return binsha

    def put(self, path: str, data: bytes) -> None:
        parts = _split(path)
        folder = self._folder(parts[:-1], create=True)
        folder[parts[-1]] = ("blob", BLOB_MODE, self._add(b"blob", data), None)

    def delete(self, path: str) -> None:
        parts = _split(path.rstrip("/"))
        folder = self._folder(parts[:-1], create=False)
        if folder is not None:
            folder.pop(parts[-1], None)

    def tree_id(self) -> str:
        """The id of the tree as edited so far, computed without writing anything."""
        return self._write(self.root).hex()

    def write(self) -> str:
        sha = self._write(self.root).hex()
        _write_objects(self.repo, self.owner, self.pending)
        self.pending = {}
        return sha

    def _write(self, node: dict) -> bytes:
        entries = []
        for name, entry in node.items():
            if isinstance(entry, dict):
                if not entry:
                    continue  # Git has no empty folders
                entries.append((self._write(entry), TREE_MODE, name))
            else:
                entries.append((entry[2], entry[1], name))
        # Git orders tree entries as if folder names ended with '/'.
        entries.sort(key=lambda e: e[2] + "/" if e[1] == TREE_MODE else e[2])
        buf = BytesIO()
        tree_to_stream(entries, buf.write)
        return self._add(b"tree", buf.getvalue())


PACK_MIN_OBJECTS = 512  # a commit writing this many new objects writes them as one pack
_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}


def _write_objects(repo: git.Repo, owner: IndexRepo, objects: dict[bytes, tuple[bytes, bytes]]) -> None:
    """Write `objects` (binsha -> (type, data)) into the repository's object database.

    Objects already stored, loose or in a pack, are skipped (an unchanged file of a recompile). Many
    objects go into one pack (undeltified; `git gc` deltifies later), handed to `git index-pack`,
    which checks every object and writes the pack's index; few are written loose, as Git does.
    """
    objects_dir = Path(repo.common_dir) / "objects"  # a linked worktree's objects are the main repository's
    todo = [(binsha, kind, data) for binsha, (kind, data) in objects.items()
            if not (objects_dir / binsha.hex()[:2] / binsha.hex()[2:]).exists()]
    if todo and any((objects_dir / "pack").glob("*.pack")):
        asked = "".join(binsha.hex() + "\n" for binsha, _, _ in todo).encode()
        # one `cat-file --batch-check` for all of them: a stored object prints its id, a new one "<id> missing"
        stored = {line for line in owner._git_output(["cat-file", "--batch-check=%(objectname)"], asked).split("\n")
                  if line and not line.endswith(" missing")}
        todo = [t for t in todo if t[0].hex() not in stored]
    if len(todo) >= PACK_MIN_OBJECTS:
        whole = owner._git_output(["index-pack", "--stdin"], _pack_bytes(todo)).split()[-1]
        _deltify(owner, objects_dir / "pack", whole, [binsha.hex() for binsha, _, _ in todo])
        return
    for binsha, kind, data in todo:
        _write_loose(objects_dir, binsha.hex(), kind, data)


def _deltify(owner: IndexRepo, pack_dir: Path, whole: str, ids: list[str]) -> None:
    """Replace the undeltified pack `whole` by one `git pack-objects` writes with deltas between its
    objects (pages of one layout differ in a few lines; Git's own gc keeps whole objects whole).
    The objects are in some pack at every moment: the new pack is in place before the old goes."""
    if not (pack_dir / f"pack-{whole}.idx").exists():
        return
    prefix = pack_dir / ".hti-delta"
    name = owner._git_output(["pack-objects", "-q", "--no-reuse-object", str(prefix)],
                             ("\n".join(ids) + "\n").encode("ascii")).strip()
    if not name or name == whole:
        for ext in ("pack", "idx", "rev"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{prefix}-{name}.{ext}")
        return
    for ext in ("pack", "rev", "idx"):  # the index last: Git only looks at packs that have one
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{prefix}-{name}.{ext}", pack_dir / f"pack-{name}.{ext}")
    for ext in ("idx", "rev", "pack"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pack_dir / f"pack-{whole}.{ext}")


def _pack_bytes(objects: list[tuple[bytes, bytes, bytes]]) -> bytes:
    """A version-2 pack file holding `objects` whole (no deltas)."""
    out = [b"PACK" + struct.pack(">II", 2, len(objects))]
    for _, kind, data in objects:
        size = len(data)
        byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        header = bytearray()
        while size:
            header.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        header.append(byte)
        out.append(bytes(header))
        out.append(zlib.compress(data, 1))
    body = b"".join(out)
    return body + hashlib.sha1(body).digest()


def _write_loose(objects_dir: Path, hexsha: str, kind: bytes, data: bytes) -> None:
    """One loose object, written as Git writes it: zlib of '<type> <size>\\0<data>', read-only, by rename."""
    folder = objects_dir / hexsha[:2]
    target = folder / hexsha[2:]
    folder.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zlib.compress(b"%s %d\0" % (kind, len(data)) + data, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _write_file(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.hti-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def _name_status(out: str) -> list[tuple[str, str]]:
    """(status, path) pairs from `git diff-tree -z --name-status`: paths verbatim, never C-quoted
    (without -z, git quotes names outside ASCII, such as a document folder named 契約)."""
    fields = out.split("\0")
    return [(status, path) for status, path in zip(fields[0::2], fields[1::2]) if status]


def blob_sha(data: bytes) -> str:
    """The Git object id a blob of `data` gets (sha1 of 'blob <size>\\0' + data); pure, no repository."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def tree_sha(files: dict[str, bytes]) -> str:
    """The Git object id of the tree holding `files` (relative path -> bytes), as commit() writes it.

    Pure (nothing is written): lets a compile record its document folder's tree id in the catalogue
    of the same commit, so a reader can tell a current catalogue entry from a stale one by comparing
    ids in the top-level tree. It is commit()'s own tree builder, with no repository behind it.
    """
    builder = _TreeBuilder(None, None, None)
    for path, data in files.items():
        builder.put(path, data)
    return builder.tree_id()


def _split(path: str) -> list[str]:
    parts = path.split("/")
    # NUL would corrupt the tree object, and '.GIT' is '.git' on case-insensitive file systems
    # (GitPython raises a bare ValueError for both; refuse them here as a StoreError instead).
    if (not path or path.startswith("/") or "\0" in path
            or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts)):
        raise StoreError(f"refusing unsafe path {path!r}")
    return parts


def _prune_empty_dirs(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _empty_tree(repo: git.Repo) -> str:
    return EMPTY_TREE


def parse_trailers(message: str) -> dict[str, str]:
    """`Key: value` lines of the last paragraph of a commit message, when they all look so."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if not sep or " " in key:
            return {}
        out[key] = value
    return out


def init_repository(path: str | Path, files: dict[str, bytes], message: str) -> tuple[IndexRepo, bool, CommitResult]:
    """Create (or adopt) a Git repository at `path` and commit `files` that are absent there.

    Existing files are never overwritten, so running it twice changes nothing.
    Returns (repo, created, result).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    created = False
    try:
        repo = git.Repo(path)
    except git.InvalidGitRepositoryError:
        repo = git.Repo.init(path, initial_branch="main")
        created = True
    repo.close()
    index_repo = IndexRepo(path, search_parent_directories=False)
    if index_repo.bare:
        raise StoreError(f"{path} is a bare repository; run init in a clone with a working tree")
    with index_repo.lock():
        head = index_repo.snapshot("HEAD")
        missing = {}
        for rel, data in files.items():
            on_disk = index_repo.root / rel
            if head.exists(rel):
                continue
            missing[rel] = on_disk.read_bytes() if on_disk.exists() else data
        result = CommitResult(None, index_repo.current_branch() or "main", ())
        if missing:
            result = index_repo.commit(missing, message)
    return index_repo, created, result
