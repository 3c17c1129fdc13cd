"""Print a filing's Markdown (bench/data/*.md) to PDF as a browser prints the filing's web page.

    python bench/data/render_pdf.py bench/data/apple-10-q-2024.md bench/data/apple-10-q-2024.pdf

Filings reach users as PDFs printed from EDGAR's HTML more often than as Markdown. This renders the
Markdown to HTML with markdown-it-py (tables on, the filing's own <div> wrappers kept) and prints it with
headless Chromium (Debian's `chromium` package; not needed by anything else, so not a dependency).
The PDFs in bench/data were made with it; `python bench/eval_filing.py --pdf` evaluates them. PDFium
gives their text as a printed filing's: no blank lines, table columns one space apart.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

STYLE = """@page { size: letter; margin: 0.8in; }
body { font-family: 'Liberation Serif', serif; font-size: 11pt; }
table { border-collapse: collapse; font-size: 9.5pt; margin: 6pt 0; } td, th { padding: 1px 6px; }"""


RULE = re.compile(r"\|(?:\s*:?-+:?\s*\|)+\s*")


def cells(line: str) -> int:
    return len(line.strip().strip("|").split("|"))


def html(markdown: str) -> str:
    lines: list[str] = []
    rows: list[str] = []
    for line in markdown.splitlines():  # a cell broken over lines: its row joined into one line
        if rows and rows[-1].startswith("|") and not rows[-1].rstrip().endswith("|"):
            rows[-1] += " " + line.strip()
        else:
            rows.append(line)
    for line in rows:
        if line.startswith("|") and lines and lines[-1].strip() and not lines[-1].startswith("|"):
            lines.append("")  # a table right after a paragraph's line needs a blank line first
        if RULE.fullmatch(line) and lines and cells(line) != cells(lines[-1]):
            line = "|" + "---|" * cells(lines[-1])  # the rule under a header must have the header's cells
        lines.append(line)
    body = MarkdownIt("commonmark", {"html": True}).enable("table").render("\n".join(lines))
    return f'<!doctype html><html><head><meta charset="utf-8"><style>{STYLE}</style></head><body>{body}</body></html>'


def main(source: str, target: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "filing.html"
        page.write_text(html(Path(source).read_text(encoding="utf-8")), encoding="utf-8")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--print-to-pdf={Path(target).resolve()}", str(page)], check=True, capture_output=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
