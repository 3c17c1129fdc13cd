"""Evaluation: question sets, gold evidence, scoring answers against them."""
