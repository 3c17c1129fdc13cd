"""hti-git: compile long documents into a hierarchical plain-text index kept in Git."""

__version__ = "0.1.0"
FORMAT_VERSION = 1
