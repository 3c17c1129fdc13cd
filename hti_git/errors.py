"""Library exceptions. The CLI maps each to a one-line message and an exit code."""


class HtiError(Exception):
    """Base class: a problem the user can act on (never a bug)."""

    exit_code = 1


class UsageError(HtiError):
    """A bad argument or option combination."""

    exit_code = 2


class OptionError(UsageError):
    """Options that do not go together; the CLI adds where to read the command's usage."""


class NotARepositoryError(HtiError):
    """The directory is not an hti-git index repository."""


class NotAnIndexError(NotARepositoryError):
    """A Git repository without hti.yaml: `hti-git init` has not made it an index repository."""


class SourceError(HtiError):
    """A document cannot be read: missing, empty, unsupported, corrupt, encrypted, too large."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

    def __reduce__(self):  # rebuilt from its two fields when it crosses a process boundary
        return type(self), (self.path, self.reason)


class StoreError(HtiError):
    """A Git-level problem: unknown revision, missing page, ref moved under us."""


class DirtyTreeError(StoreError):
    """A document folder has uncommitted edits, so a compile would overwrite them."""


class LockedError(StoreError):
    """Another hti-git process holds the repository lock."""


class ConfigError(HtiError):
    """hti.yaml or the environment holds an invalid setting."""


class PageFormatError(HtiError):
    """A page's front-matter or body cannot be parsed."""


class ModelError(HtiError):
    """A model call failed after retries, or returned output that cannot be used."""


class BudgetExceededError(HtiError):
    """A compile would spend more tokens than --max-tokens allows."""
