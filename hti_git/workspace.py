"""Create or open an index repository: Git repository + hti.yaml + templates + .gitattributes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import hti_git
from hti_git.config import CONFIG_FILE, DEFAULT_CONFIG_TEXT, Settings, load_settings
from hti_git.errors import ConfigError, NotAnIndexError, NotARepositoryError
from hti_git.store import IndexRepo, init_repository

# catalogue shards merge as a union of lines: two branches that each compiled other documents merge
# cleanly, and readers repair what a union cannot (index/catalog.py).
GITATTRIBUTES = "*.md diff=markdown\nsource.txt diff linguist-generated=false\ncatalog/*.jsonl merge=union\n"
# `hti-git eval` writes its report to eval-out/ by default: output, not part of the index.
GITIGNORE = "# hti-git eval's default output folder\n/eval-out/\n"


def packaged_templates_dir() -> Path:
    """Templates shipped in the wheel, or the repository's templates/ in an editable install."""
    inside = Path(hti_git.__file__).parent / "templates"
    return inside if inside.is_dir() else Path(hti_git.__file__).parent.parent / "templates"


def init_files() -> dict[str, bytes]:
    files = {CONFIG_FILE: DEFAULT_CONFIG_TEXT.encode("utf-8"), ".gitattributes": GITATTRIBUTES.encode("utf-8"),
             ".gitignore": GITIGNORE.encode("utf-8")}
    folder = packaged_templates_dir()
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                files[f"templates/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    return files


def init_index(path: str | Path) -> dict[str, Any]:
    """Create (or adopt) an index repository at `path`; idempotent. Returns what was done."""
    repo, created, result = init_repository(path, init_files(), "Initialise hti-git index repository")
    try:
        return {
            "path": str(repo.root),
            "created_repository": created,
            "commit": result.sha,
            "added": list(result.changed),
            "branch": result.branch,
        }
    finally:
        repo.close()


def open_index(path: str | Path = ".") -> tuple[IndexRepo, Settings]:
    """The index repository containing `path` and its settings.

    Raises NotAnIndexError for a Git repository that `hti-git init` never made an index (it has no
    hti.yaml, in its working tree or at HEAD): compiling there would commit document folders onto
    someone's code, and reading there finds nothing to read.
    """
    repo = IndexRepo(path)
    if not is_index(repo):
        root = repo.root
        repo.close()
        raise NotAnIndexError(f"{root} is a Git repository but not an hti-git index (no {CONFIG_FILE}); "
                              f"run 'hti-git init' there to make it one")
    repo.recover_if_idle()  # a compile killed after its ref move left the working tree behind
    return repo, load_settings(None if repo.bare else repo.root)


def is_index(repo: IndexRepo) -> bool:
    """True when `repo` is an index repository: hti.yaml in its working tree or committed at HEAD."""
    if not repo.bare and (repo.root / CONFIG_FILE).is_file():
        return True
    return repo.snapshot("HEAD").exists(CONFIG_FILE)


@dataclasses.dataclass(frozen=True)
class ModelSetup:
    """What a command that only calls the model (`check`, `schema discover`) takes from where it runs."""

    settings: Settings
    root: Path | None = None  # the index's working tree, for its templates/; None outside one or when bare
    cache_path: Path | None = None  # the index's response cache; None outside an index


def model_setup(path: str | Path = ".", model: str | None = None) -> ModelSetup:
    """An index repository's model settings, templates and cache, or, outside one (no Git repository,
    or one `hti-git init` never made an index), the environment's settings alone.

    `model` overrides the model. Raises ConfigError when no usable endpoint is configured, and for an
    invalid hti.yaml, as every command does.
    """
    from hti_git.llm.cache import CACHE_FILE  # hti_git.llm loads the model client: only when asked

    try:
        repo, settings = open_index(path)
    except NotARepositoryError:  # NotAnIndexError too: a schema can be proposed before any index exists
        setup = ModelSetup(load_settings(None))
    else:
        try:
            setup = ModelSetup(settings, None if repo.bare else repo.root, repo.hti_dir / CACHE_FILE)
        finally:
            repo.close()
    settings = setup.settings.with_overrides(model=model)
    if not settings.model_configured():
        raise ConfigError(f"no usable model endpoint: {settings.model_missing()}")
    return dataclasses.replace(setup, settings=settings)
