"""Test helpers shared across the test suite and the benchmarks."""
