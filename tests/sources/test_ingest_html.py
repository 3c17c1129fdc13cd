"""HTML ingestion: chrome and code dropped, entities decoded, blocks as lines, <pre> and tables kept."""

from __future__ import annotations

import pytest

from hti_git.sources import load_source
from hti_git.sources.html import html_to_text

PAGE = """<!DOCTYPE html>
<html><head><title>Site title</title><style>p { color: red }</style>
<script>var tracking = "do not index";</script></head>
<body>
<header>Site header</header>
<nav><a href="/">Home</a> | <a href="/scripts">All scripts</a></nav>
<noscript>Enable JavaScript</noscript>
<h1>Supply   Agreement</h1>
<p>Smith &amp; Sons&nbsp;Ltd agree to deliver
   goods &lt;on time&gt; &#8212; always.</p>
<div>First block</div><div>Second block<br>after a break</div>
<h2>Prices</h2>
<table><tr><th>Item</th><th>Price</th></tr><tr><td>Timber</td><td>&#36;10</td></tr></table>
<pre>
                    INT. KITCHEN - NIGHT

          JOHN
     (quietly)
  Pass the salt.
</pre>
<footer>Copyright footer</footer>
</body></html>
"""


@pytest.fixture
def write(tmp_path):
    def write(markup: str, name: str = "page.html"):
        path = tmp_path / name
        path.write_text(markup, encoding="utf-8")
        return path

    return write


def test_html_page_text(write):
    text = load_source(write(PAGE)).text
    for gone in ("Site title", "color: red", "tracking", "Site header", "All scripts", "Enable JavaScript",
                 "Copyright footer"):
        assert gone not in text
    assert "# Supply Agreement\n" in text
    assert "Smith & Sons Ltd agree to deliver goods <on time> \u2014 always.\n" in text
    assert "First block\nSecond block\nafter a break\n" in text
    assert "## Prices\n" in text
    assert "Item | Price\nTimber | $10\n" in text


def test_pre_layout_is_verbatim(write):
    text = load_source(write(PAGE)).text
    assert "                    INT. KITCHEN - NIGHT\n\n          JOHN\n     (quietly)\n  Pass the salt.\n" in text


def test_html_media_type_and_no_page_map(write):
    source = load_source(write(PAGE))
    assert source.media_type == "text/html"
    assert source.page_starts == ()


def test_css_page_breaks_let_cleaning_drop_running_headers(write):
    page = "".join(
        f'<p>Acme 10-K annual report</p><p>Item {n}. The {word} discussion.</p>'
        f'<p align="center">{n}</p><hr style="page-break-after: always">'
        for n, word in enumerate(["risk", "market", "legal", "audit"], 1)
    )
    text = load_source(write(f"<html><body>{page}</body></html>")).text
    assert text.count("Acme 10-K annual report") == 1
    assert "Item 3. The legal discussion." in text
    assert "\n3\n" not in text


def test_nested_tables_and_unclosed_tags():
    html = "<table><tr><td>a<td>b<table><tr><td>x</td><td>y</td></tr></table><td>c</table><p>tail"
    assert html_to_text(html).split() == ["a", "|", "b", "x", "|", "y", "|", "c", "tail"]
    # a page that ends inside a table loses none of its cells
    assert html_to_text("<p>x</p><table><tr><td>a</td><td>b</td><tr><td>c<td>d").split() == \
        ["x", "a", "|", "b", "c", "|", "d"]


def test_edgar_pre_filing_page_markers(write):
    html = "<html><body><pre>\nDISTRIBUTOR AGREEMENT\n  1. Terms apply.\n\n&lt;PAGE&gt; 2\n  2. More terms.\n</pre></body></html>"
    text = load_source(write(html)).text
    assert text == "DISTRIBUTOR AGREEMENT\n  1. Terms apply.\n  2. More terms.\n"


INLINE_XBRL = """<html><head><title>aapl-20240928</title></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:AmendmentFlag" contextRef="c-1">false</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="c-1">2024</ix:nonNumeric></ix:hidden>
<ix:references><link:schemaRef xlink:type="simple" xlink:href="aapl-20240928.xsd"></link:schemaRef></ix:references>
<ix:resources><xbrli:context id="c-1"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000320193</xbrli:identifier>
</xbrli:entity><xbrli:period><xbrli:startDate>2023-10-01</xbrli:startDate><xbrli:endDate>2024-09-28</xbrli:endDate>
</xbrli:period></xbrli:context><xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
</ix:resources></ix:header></div>
<div style="text-align:center"><span style="font-weight:700">UNITED STATES</span></div>
<div style="text-align:center"><span>SECURITIES AND EXCHANGE COMMISSION</span></div>
<table><tr><td><span>Total net sales</span></td><td><span>$</span></td>
<td><ix:nonFraction unitRef="usd" contextRef="c-1" decimals="-6" name="us-gaap:Revenues" scale="6">391,035</ix:nonFraction></td></tr></table>
</body></html>"""


def test_an_inline_xbrl_filings_hidden_facts_are_not_its_text():
    """EDGAR's 10-K and 10-Q are inline XBRL: a hidden header of contexts, units and flags comes first.
    Only what a reader sees is the document's text; the facts tagged in the visible text stay."""
    text = html_to_text(INLINE_XBRL)
    assert "UNITED STATES" in text and "SECURITIES AND EXCHANGE COMMISSION" in text
    assert "Total net sales | $391,035\n" in text
    for hidden in ("0000320193", "2023-10-01", "iso4217", "false", "aapl-20240928"):
        assert hidden not in text


def test_elements_styled_hidden_are_skipped_to_their_own_end_tag():
    markup = ('<div>before</div><div style="color:red; display: none"><div>inner</div><p>gone<div>deep</div></p>'
              '</div><p>after</p><section hidden><p>also gone</p></section><p>last</p>')
    assert html_to_text(markup).split() == ["before", "after", "last"]


def test_a_filings_table_rows_read_as_a_reader_sees_them():
    """EDGAR's tables put spacer columns between figures, a figure's "$" in a cell of its own and its
    closing parenthesis or per cent sign in the next: the text keeps one cell per figure."""
    markup = ("<table><tr><td></td><td>2024</td><td></td><td>2023</td></tr>"
              "<tr><td>Total net sales</td><td>&#160;</td><td>$</td><td>391,035</td><td> </td><td>$</td>"
              "<td>383,285</td><td></td></tr>"
              "<tr><td>Other income/(expense), net</td><td></td><td>(269</td><td>)</td><td></td><td>565</td></tr>"
              "<tr><td>Gross margin percentage</td><td>46.2</td><td>%</td><td>44.1</td><td>%</td></tr>"
              "<tr><td>&#160;</td><td></td></tr></table>")
    assert html_to_text(markup).strip().splitlines() == [
        "2024 | 2023",
        "Total net sales | $391,035 | $383,285",
        "Other income/(expense), net | (269) | 565",
        "Gross margin percentage | 46.2% | 44.1%",
    ]


def test_an_html_tables_rows_are_table_rows_with_their_units(write):
    """A row as HTML gives it ("iPad | 7,162 | 5,791") is a table's row like a Markdown or PDF one: fast
    shows the table a row a line under its caption, as it does a PDF's."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings
    from hti_git.query.offline import ask_fast
    from hti_git.store import IndexRepo
    from hti_git.text import is_table_row
    from hti_git.workspace import init_index

    assert is_table_row("iPad | 7,162 | 5,791") and is_table_row("Total net sales | $391,035")
    assert not is_table_row("Governing law | see Section 9") and not is_table_row("A sentence with one | bar.")
    rows = "".join(f"<tr><td>{name}</td><td>$</td><td>{a}</td><td>$</td><td>{b}</td></tr>"
                   for name, a, b in (("iPhone", "39,296", "39,669"), ("iPad", "7,162", "5,791"), ("Mac", "7,009", "6,840")))
    page = ("<html><body><h1>Quarterly Report</h1><h2>Net Sales by Category</h2><p>Net sales by category for the "
            "three months ended June 29, 2024 were as follows (dollars in millions):</p>"
            f"<table><tr><td></td><td>2024</td><td>2023</td></tr>{rows}</table>"
            "<h2>Other Matters</h2><p>The Company announced new products during the quarter.</p></body></html>")
    path = write(page, "quarter.html")
    init_index(path.parent / "idx")
    with IndexRepo(path.parent / "idx") as repo:
        compile_path(repo, path, Settings(), method="fast")
        answer = ask_fast(repo.snapshot(), "What were iPad net sales by category in the quarter?")
    assert answer.found and "\niPad | $7,162 | $5,791\n" in answer.answer  # a row a line, as a table reads
    assert answer.answer.count("dollars in millions") == 1  # its caption is cited: no note repeats it
