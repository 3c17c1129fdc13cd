"""Benchmark ingestion on the shared CUAD PDFs: speed against pdftotext, and evidence kept by cleaning.

    python bench/ingest.py            # HTI_SHARED=/path/to/shared overrides ../shared

Speed: pages per second to extract *and clean* all PDFs with `hti_git.sources.load_source`, and, in
the same run, to extract them with poppler's `pdftotext` (one process per file, as a user would run
it); best of several repeats to damp noise. Evidence: the share of CUAD gold evidence strings
(`qa.jsonl`; parts joined by `<omitted>` must each be found) that occur in the cleaned text after
whitespace normalisation: exact, case-insensitive, and with typographic quotes/dashes folded to
ASCII (CUAD's annotations use straight quotes where the PDFs print curly ones).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hti_git.sources import load_source  # noqa: E402

REPEATS = 5
_SPACE = re.compile(r"\s+")
_FOLD = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u2013": "-", "\u2014": "-"})


def shared_dir() -> Path:
    return Path(os.environ.get("HTI_SHARED") or ROOT.parent / "shared").resolve()


def best_time(run, repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def pdftotext(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True,
                          capture_output=True).stdout.decode("utf-8", "replace")


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def evidence_found(evidence: list[str], text: str) -> tuple[int, int, int]:
    """How many evidence strings are found: exact, case-insensitive, typography-folded."""
    flat = normalise(text)
    lower, folded = flat.lower(), flat.translate(_FOLD)
    counts = [0, 0, 0]
    for item in evidence:
        parts = [normalise(p) for p in item.split("<omitted>") if normalise(p)]
        counts[0] += all(p in flat for p in parts)
        counts[1] += all(p.lower() in lower for p in parts)
        counts[2] += all(p.translate(_FOLD) in folded for p in parts)
    return counts[0], counts[1], counts[2]


def pct(n: int, total: int) -> str:
    return f"{100 * n / total:5.1f}%" if total else "  n/a"


def main() -> int:
    cuad = shared_dir() / "data" / "cuad"
    pdfs = sorted((cuad / "contracts").glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs under {cuad / 'contracts'} (set HTI_SHARED to the shared folder)")
        return 1
    evidence: dict[str, list[str]] = {}
    with open(cuad / "qa.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            evidence.setdefault(row["doc"], []).extend(row["evidence"])
    have_pdftotext = shutil.which("pdftotext") is not None

    sources = {pdf: load_source(pdf) for pdf in pdfs}
    pages = sum(s.page_count for s in sources.values())
    ours = best_time(lambda: [load_source(pdf) for pdf in pdfs])
    theirs = best_time(lambda: [pdftotext(pdf) for pdf in pdfs]) if have_pdftotext else None

    header = f"{'document':<32} {'pages':>5} {'chars':>7} {'ours ms':>8} {'pdftotext ms':>12} {'evidence':>8} {'exact':>6} {'folded':>6}"
    print(header)
    print("-" * len(header))
    totals = {"ours": [0, 0, 0], "pdftotext": [0, 0, 0], "cuad.txt": [0, 0, 0]}
    n_evidence = 0
    for pdf, source in sources.items():
        gold = evidence.get(pdf.stem, [])
        n_evidence += len(gold)
        found = evidence_found(gold, source.text)
        references = {"ours": found}
        if have_pdftotext:
            references["pdftotext"] = evidence_found(gold, pdftotext(pdf))
        cuad_txt = pdf.with_suffix(".txt")
        if cuad_txt.exists():
            references["cuad.txt"] = evidence_found(gold, cuad_txt.read_text(encoding="utf-8"))
        for name, counts in references.items():
            totals[name] = [a + b for a, b in zip(totals[name], counts, strict=True)]
        ours_ms = 1000 * best_time(lambda pdf=pdf: load_source(pdf), 3)
        their_ms = f"{1000 * best_time(lambda pdf=pdf: pdftotext(pdf), 3):12.1f}" if have_pdftotext else f"{'-':>12}"
        print(f"{pdf.stem[:32]:<32} {source.page_count:>5} {len(source.text):>7} {ours_ms:8.1f} {their_ms}"
              f" {len(gold):>8} {pct(found[0], len(gold))} {pct(found[2], len(gold))}")
    print()
    print(f"speed (best of {REPEATS}, {len(pdfs)} PDFs, {pages} pages, extract + clean):")
    print(f"  hti-git (pypdfium2 + clean) {pages / ours:8.0f} pages/s")
    if theirs is None:
        print("  pdftotext                   not installed (apt-get install poppler-utils); ratio skipped")
    else:
        print(f"  pdftotext (poppler)         {pages / theirs:8.0f} pages/s")
        print(f"  ratio                       {theirs / ours:8.2f}x  (target >= 2x)")
    print()
    print(f"evidence found verbatim, whitespace-normalised ({n_evidence} strings):")
    print(f"  {'text':<28} {'exact':>7} {'no-case':>7} {'folded':>7}")
    for name, counts in totals.items():
        if name == "pdftotext" and not have_pdftotext:
            continue
        label = {"ours": "hti-git cleaned text", "pdftotext": "pdftotext raw text",
                 "cuad.txt": "CUAD's own .txt (reference)"}[name]
        print(f"  {label:<28} {pct(counts[0], n_evidence):>7} {pct(counts[1], n_evidence):>7}"
              f" {pct(counts[2], n_evidence):>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
