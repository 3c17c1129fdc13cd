# hti-git developer tasks. `make install` once, then `make demo` and `make test`.
PYTHON ?= python3

.PHONY: install test test-quick lint demo bench soak

install:  ## install hti-git and its test tools into the current Python environment
	$(PYTHON) -m pip install -e '.[dev]'

test:  ## run the whole test suite (no network, no API key needed)
	$(PYTHON) -m pytest

test-quick:  ## the inner loop: everything but the tests marked slow (make test runs them all)
	$(PYTHON) -m pytest -m "not slow"

lint:
	$(PYTHON) -m ruff check hti_git tests bench

demo:  ## the main job, offline: compile two real contracts and ask them questions
	bash examples/demo.sh demo-index

bench:  ## benchmarks (see bench/README.md); each prints ratios against a baseline from the same run
	$(PYTHON) bench/fast_cuad.py
	$(PYTHON) bench/ingest.py
	$(PYTHON) bench/pdf_parallel.py
	$(PYTHON) bench/llm_overhead.py
	$(PYTHON) bench/compile_standard.py
	$(PYTHON) bench/ask_cost.py
	$(PYTHON) bench/diff.py
	$(PYTHON) bench/eval_cuad.py
	$(PYTHON) bench/eval_filing.py
	$(PYTHON) bench/eval_filing.py --pdf
	$(PYTHON) bench/replay_runs.py
	$(PYTHON) bench/fast_recall.py
	$(PYTHON) bench/clause_probe.py --llm run55-probe

soak:  ## 200 compile/kill/resume cycles and 1,000 concurrent asks (several minutes)
	$(PYTHON) bench/soak.py
