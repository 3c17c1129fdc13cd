"""Answering: navigate an index at a revision, answer with citations, fall back to the source."""
