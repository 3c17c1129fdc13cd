"""Reading a batch of PDFs in parallel: threads behind the PDFium lock vs worker processes.

    python bench/pdf_parallel.py [COPIES]      # HTI_SHARED=/path/to/shared overrides ../shared

PDFium is not thread-safe, so `compile -j N` can either serialise every PDFium call behind one lock
(threads still overlap the Python cleaning, under the GIL) or read PDFs in worker processes (true
parallelism, at the price of starting the workers and pickling the text back). This times
`load_source` (extract + clean) over the shared CUAD PDFs, COPIES times each (default 3), three ways
in the same run: one thread (the baseline), 4 threads with the lock, and a process pool as
`compile -j 4` uses it (hti_git.compile.batch.SourceReader). Best of 3 repeats; ratios are against
the single thread.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from benchlib import require_cuad

from hti_git.compile.batch import SourceReader
from hti_git.sources import load_source

REPEATS = 3


def best(run) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    pdfs = sorted((require_cuad() / "contracts").glob("*.pdf")) * copies
    print(f"{len(pdfs)} PDFs ({len(pdfs) // copies} distinct x {copies}), {os.cpu_count()} cores, best of {REPEATS}")

    serial = best(lambda: [load_source(p) for p in pdfs])

    def threads():
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(load_source, pdfs))

    def processes():
        with SourceReader(jobs=4, paths=pdfs) as reader:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(reader.load, pdfs))

    threaded = best(threads)
    pooled = best(processes)
    print(f"{'way':<34}{'seconds':>9}{'vs 1 thread':>13}")
    for name, seconds in (("1 thread (baseline)", serial), ("4 threads, PDFium lock", threaded),
                          ("4 threads + process pool", pooled)):
        print(f"{name:<34}{seconds:>9.2f}{serial / seconds:>12.2f}x")


if __name__ == "__main__":
    main()
