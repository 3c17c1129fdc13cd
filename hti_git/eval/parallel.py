"""Answer an evaluation's questions in worker processes (`hti-git eval -j N`).

With a model, answering is mostly waiting on the endpoint: 1,500 questions at two calls of a few
seconds each take hours one at a time. Each worker is a fresh process (spawned, never forked: the
parent runs GitPython's `git cat-file` readers) that opens the repository itself, reads the revision
once and answers the questions it is given; results are put back in question order, so the report is
the same as one process gives.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from hti_git.config import Settings
from hti_git.eval.questions import Question
from hti_git.eval.systems import Sources, SystemAnswer
from hti_git.store import IndexRepo

Answerer = Callable[[str, IndexRepo, Settings, Sources, Question, str, Any, Any, Any], SystemAnswer]

_OPEN: dict[tuple[str, str], tuple[IndexRepo, Sources]] = {}  # per worker: the repository and revision read


def answer_in_workers(jobs: int, git_dir: str, sha: str, rev: str, kind: str, settings: Settings,
                      questions: list[tuple[int, Question]], method: str, options: Any, root: Any,
                      answerer: Answerer) -> Iterator[tuple[int, SystemAnswer]]:
    """(position, answer) of each question as its worker finishes it."""
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(jobs, len(questions)), mp_context=ctx) as pool:
        futures = {pool.submit(_answer, git_dir, sha, rev, kind, settings, q, method, options, root, answerer): i
                   for i, q in questions}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _answer(git_dir: str, sha: str, rev: str, kind: str, settings: Settings, question: Question, method: str,
            options: Any, root: Any, answerer: Answerer) -> SystemAnswer:
    """In a worker: one question, on the repository and revision this worker opened first."""
    if (git_dir, sha) not in _OPEN:
        repo = IndexRepo(git_dir, search_parent_directories=False)
        snapshot = repo.snapshot(sha)
        snapshot.rev = rev
        _OPEN[(git_dir, sha)] = (repo, Sources(snapshot))
    repo, sources = _OPEN[(git_dir, sha)]
    return answerer(kind, repo, settings, sources, question, method, options, None, root)
