"""Heading lines of the `fast` method (issue 20): article styles, titles, and body text that is not a heading."""

from __future__ import annotations

import pytest

from hti_git.compile.fast import compile_fast
from hti_git.compile.headings import find_headings
from hti_git.compile.structure import find_sections
from hti_git.sources.types import SourceText

GAS = """GAS TRANSPORTATION AGREEMENT
This Gas Transportation Agreement is made on the 14th day of April, 2015 by and between Alpha Operating, LLC ("Transporter") and Beta Operating LLC ("Customer").
Article I. Definitions
"Day" shall mean a period of twenty-four consecutive hours.
Article II. Term
This Agreement shall commence on the Effective Date and continue until the end of the fifteenth Contract Year.
Article VI. Measurement & Testing
Transporter shall measure all Gas at the Measurement Facilities.
Article XIII. Limitation of Liability
NO PARTY SHALL BE LIABLE FOR CONSEQUENTIAL, INCIDENTAL OR PUNITIVE DAMAGES.
Article XV. Miscellaneous
This Agreement shall be governed by the laws of the State of Texas.
"""

EXPECTED = ["Article I. Definitions", "Article II. Term", "Article VI. Measurement & Testing",
            "Article XIII. Limitation of Liability", "Article XV. Miscellaneous"]


def _subjects(record):
    out = []

    def walk(category):
        out.extend(category.subjects)
        for child in category.children:
            walk(child)

    for category in record.categories:
        walk(category)
    return out


def test_issue_20_gas_agreement_articles_keep_their_titles_and_bodies():
    record = compile_fast(SourceText(name="gas.txt", text=GAS, media_type="text/plain", raw_sha256="0" * 64, raw_bytes=len(GAS)))
    body = record.categories[0]
    names = [s.name for s in body.subjects]
    assert [n for n in names if n.startswith("Article")] == EXPECTED
    assert not any("Liable" in n for n in names)  # the capitalised sentence stays body text
    by_name = {s.name: s for s in _subjects(record)}
    text_of = {n: " ".join(v.text for v in by_name[n].fields["text"]) for n in EXPECTED}
    assert text_of["Article XIII. Limitation of Liability"] == (
        "NO PARTY SHALL BE LIABLE FOR CONSEQUENTIAL, INCIDENTAL OR PUNITIVE DAMAGES.")
    assert text_of["Article XV. Miscellaneous"].startswith("This Agreement shall be governed")
    assert by_name["Article XIII. Limitation of Liability"].aliases == ["Article 13"]
    for n in EXPECTED:  # every span points at the exact source text
        for v in by_name[n].fields["text"]:
            assert GAS[v.spans[0][0]:v.spans[0][1]] == v.text


@pytest.mark.parametrize("line, title", [
    ("Article XIII. Limitation of Liability", "Article XIII. Limitation of Liability"),
    ("Article XIII Limitation of Liability", "Article XIII Limitation of Liability"),
    ("ARTICLE XIII. LIMITATION OF LIABILITY", "Article XIII. Limitation of Liability"),
    ("ARTICLE 13 LIMITATION OF LIABILITY", "Article 13 Limitation of Liability"),
    ("Article 13: Limitation of Liability", "Article 13: Limitation of Liability"),
    ("Article 13 - Limitation of Liability", "Article 13 - Limitation of Liability"),
    ("Section 13. Limitation of Liability", "Section 13. Limitation of Liability"),
    ("SECTION 13.2 LIMITATION OF LIABILITY", "Section 13.2 Limitation of Liability"),
    ("13. Limitation of Liability", "13 Limitation of Liability"),
    ("13.2 Limitation of Liability. Neither party shall be liable for lost profits.", "13.2 Limitation of Liability"),
    ("13.2 Limitation of Liability: Neither party shall be liable for lost profits.", "13.2 Limitation of Liability"),
])
def test_heading_variants_on_one_line(line, title):
    text = f"Preceding paragraph of the agreement ends here.\n{line}\nNeither party shall be liable for lost profits.\n"
    titles = [h.title for h in find_headings(text)]
    assert titles == [title]


@pytest.mark.parametrize("label", ["ARTICLE XIII", "Article XIII.", "ARTICLE 13", "Section 13"])
def test_title_on_the_next_line(label):
    text = f"The parties agree as follows.\n{label}\nLIMITATION OF LIABILITY\nNeither party shall be liable for lost profits.\n"
    headings = find_headings(text)
    assert len(headings) == 1
    assert headings[0].title.endswith("Limitation of Liability")
    sections = find_sections(text)
    assert text[sections[-1].body:].startswith("Neither party")


@pytest.mark.parametrize("text", [
    "The Warrant may not be transferred except pursuant to the provisions of\nArticle 4 below, may not be offered, sold or pledged.\n",
    "Termination is governed by the provisions of\nSection 19 (Warranties and Indemnities), Section 20 (Limitation of Liability).\n",
    "The Company shall pay the fee within\n30 Business Days after receipt of an invoice.\n",
    "The parties agree.\nNO PARTY SHALL BE LIABLE FOR CONSEQUENTIAL, INCIDENTAL OR PUNITIVE DAMAGES.\n",
    "Payment is due to\nAlpha Holdings Corp.,\nat its offices in Houston.\n",
    "The schedule is set out in\nExhibit G.\nwhich the parties have initialled.\n",
])
def test_body_lines_are_not_headings(text):
    assert find_headings(text) == []


def test_numbered_clauses_nest_under_their_article_and_untitled_clauses_are_subjects():
    text = ("ARTICLE 7 GENERAL\n7.1 Further Assurances. Each party will execute further documents as needed.\n"
            "7.5 The Company acknowledges that the Consultant may invoice through his own company.\n"
            "ARTICLE 8 NOTICES\n8.1 Notices. All notices must be in writing and delivered by hand.\n")
    sections = find_sections(text)
    by_title = {s.title: s for s in sections}
    assert by_title["7.1 Further Assurances"].parents == ["Article 7 General"]
    untitled = [s for s in sections if s.number == "7.5"][0]
    assert untitled.parents == ["Article 7 General"]
    assert untitled.title.startswith("7.5 The Company acknowledges")
    assert by_title["8.1 Notices"].parents == ["Article 8 Notices"]


def test_annexes_are_their_own_branch():
    text = ("Exhibit 10.7\nCONSULTING AGREEMENT\nThis agreement is made between the Company and the Consultant today.\n"
            "ARTICLE 1 GENERAL\n1.1 Governing Law. This Agreement is governed by the laws of New York State.\n"
            "Annex A\nFORM OF WARRANT\nARTICLE 1. MISCELLANEOUS.\n"
            "1.1 Governing Law. This Warrant is governed by the laws of the State of New York.\n")
    record = compile_fast(SourceText(name="c.txt", text=text, media_type="text/plain", raw_sha256="0" * 64, raw_bytes=len(text)))
    names = [c.name for c in record.categories]
    assert "Exhibits and annexes" in names
    annexes = record.categories[names.index("Exhibits and annexes")]
    assert [c.name for c in annexes.children] == ["Annex A"]
    body_titles = [s.name for c in record.categories[:1] for g in c.children for s in g.subjects]
    assert "1.1 Governing Law" in body_titles
    assert not any("Exhibit 10.7" == c.name for c in annexes.children)  # the filing's label is no annex


def test_an_attachment_label_opening_a_page_run_into_one_line_is_a_heading():
    """Text files that hold a page a line ("9 Annex A THIS WARRANT AND ...") open an annex mid-line; the
    page number goes with the heading, not with the clause before it. A label in running text stays text."""
    body = "THIS WARRANT AND THE SHARES ISSUABLE HEREUNDER HAVE NOT BEEN REGISTERED UNDER THE ACT. " * 5
    text = ("ARTICLE 7 GENERAL\n8 7.10 Governing Law. This Agreement is governed by the laws of New York. Agreed and accepted: A. Person\n"
            f"9 Annex A {body}\n"
            "10 Reference is made to the Warrant set forth in\nExhibit B and the terms of the Company from time to time.\n")
    annex = [h for h in find_headings(text) if h.kind == "annex"]
    assert [h.title for h in annex] == ["Annex A"]
    assert text[annex[0].start: annex[0].end].strip() == "9 Annex A"


def test_run_on_text_still_finds_inline_headings():
    text = ("CONSULTING AGREEMENT This Agreement is made between the parties as follows: ARTICLE 1 CONTRACT FOR "
            "SERVICES 1.1 Engagement of Consultant. The Company hereby agrees to engage the Consultant in accordance "
            "with the terms hereof. 1.2 Duties. The Consultant will report to the chief executive officer of the "
            "Company and will advise on investor relations and corporate structure from time to time as requested. "
            "Article 2 COMPENSATION 2.1 Remuneration. The Company will pay the Consultant a monthly fee.")
    titles = [h.title for h in find_headings(text)]
    assert "Article 1 Contract for Services" in titles
    assert "1.1 Engagement of Consultant" in titles and "1.2 Duties" in titles
    assert "Article 2 Compensation" in titles


def test_a_page_run_into_one_line_with_gaps_for_line_breaks_has_its_headings():
    """Text exports that hold a page a line keep the original line breaks as runs of spaces: a heading
    after such a gap is a heading, an article's title running into its first section's number too. A
    table's row in the same line (figures between gaps) gives none."""
    text = ("VAT 7.3.2     2 Research and Development Collaboration   2.1 Project Plan. The Parties shall "
            "collaborate on the Research Program in accordance with the Project Plan, as amended from time to "
            "time by the JSC.   2.2 Party Responsibilities.   2.2.1 General. Microgenics and Achaogen shall each "
            "perform their respective obligations under the Research Program.   Revenue by quarter   "
            "12 Months Ended   2019   2020   Total   4,512   4,021   Article 3 Regulatory Matters. Each Party "
            "shall comply with all applicable laws.")
    titles = [h.title for h in find_headings(text)]
    assert titles == ["2 Research and Development Collaboration", "2.1 Project Plan", "2.2 Party Responsibilities",
                      "2.2.1 General", "Article 3 Regulatory Matters"]


def test_a_page_number_run_into_a_numbered_heading_and_titles_opening_with_no_or_section():
    """"12 2.3 Merger or Consolidation." opens a page line with the page before's number; "No Waiver" and
    "Section Headings" are titles ("Section 4 Notices" after a page number is not)."""
    body = "The Holder shall receive the kind and amount of shares it would have held upon exercise. " * 4
    text = (f"2.2 Reclassification. {body}\n12 2.3 Merger or Consolidation. {body}\n"
            f"Closing words of a clause on this page.   13.3 No Waiver. {body}  7.7 Section Headings. The "
            f"headings are for convenience only. 7 Section 4 Notices apply.")
    headings = find_headings(text)
    titles = [h.title for h in headings]
    assert titles == ["2.2 Reclassification", "2.3 Merger or Consolidation", "13.3 No Waiver", "7.7 Section Headings"]
    assert text[headings[1].start:].startswith("2.3 Merger")


def test_html_wrappers_of_markdown_converted_from_html_are_not_part_of_a_title():
    text = ("<div align='center'>Apple Inc.\n\nDOCUMENTS INCORPORATED BY REFERENCE</div>\n\n"
            "Portions of the Registrant's definitive proxy statement are incorporated by reference.\n\n"
            "<div align='center'>PART I</div>\n\nItem 1. Business\n\nThe Company designs smartphones.\n\n"
            "Item 1A. Risk Factors\n\nThe Company's business can be affected by many factors.\n\n"
            "Item 2. Properties\n\nThe Company's headquarters is located in Cupertino, California.\n")
    headings = find_headings(text)
    titles = [h.title for h in headings]
    assert "Documents Incorporated by Reference" in titles and "Part I" in titles
    assert not any("<" in t or ">" in t for t in titles)
    part = next(h for h in headings if h.title == "Part I")
    assert text[part.start:].startswith("PART I")


def test_a_numbered_title_inside_an_article_label_is_not_a_second_heading():
    text = ("The Holder may exercise this Warrant as set forth in this Warrant. ARTICLE 4. MISCELLANEOUS. 4.1 Term. "
            "This Warrant is exercisable until the fifth anniversary of the Issue Date, as the Company and the "
            "Holder agreed in writing on the Issue Date. 4.2 Legends. The Warrant bears the legends required by law.")
    assert [h.title for h in find_headings(text)] == ["Article 4 Miscellaneous", "4.1 Term", "4.2 Legends"]


def test_an_inline_title_may_join_two_topics_with_a_semicolon():
    # EDGAR text exports often hold a whole contract on one line; "7. A; B." heads clause 7 there too
    text = ("6. TERMINATION. (a) Either party may terminate this Agreement upon fifteen (15) days advance notice "
            "to the other. 7. LIMITATIONS OF LIABILITY; INDEMNIFICATION OF CONTRACTOR. (a) CONTRACTOR'S MAXIMUM "
            "LIABILITY SHALL BE LIMITED TO THE AMOUNT OF FEES PAID. 8. CONFIDENTIAL INFORMATION. \"Confidential "
            "Information\" means all documents obtained by Contractor from Company.")
    titles = [h.title for h in find_headings(text)]
    assert "7 Limitations of Liability; Indemnification of Contractor" in titles
    assert "8 Confidential Information" in titles


FILING = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-K

TABLE OF CONTENTS

PART I
Item 1. Business 3
Item 1A. Risk Factors 12
PART II
Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of Equity Securities 33
Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations 35

PART I

ITEM 1. BUSINESS

We design and sell widgets to customers in 40 countries, as described in
Item 7 of this report.

Item 1A. Risk Factors

Our largest customer accounted for 23% of net revenue in fiscal 2025.

PART II

ITEM 5.
MARKET FOR REGISTRANT'S COMMON EQUITY, RELATED STOCKHOLDER MATTERS AND ISSUER PURCHASES OF EQUITY SECURITIES

Our common stock trades on the Nasdaq Global Select Market.

Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations

Net revenue was $4,512 million, up 12% from $4,021 million.
"""


def test_a_filings_items_nest_under_their_parts_and_its_contents_list_is_not_structure():
    sections = [s for s in find_sections(FILING) if s.title.startswith(("Part", "Item"))]
    assert [(s.title, s.parents) for s in sections] == [
        ("Part I", []),
        ("Item 1. Business", ["Part I"]),
        ("Item 1A. Risk Factors", ["Part I"]),
        ("Part II", []),
        ("Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of Equity "
         "Securities", ["Part II"]),
        ("Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations", ["Part II"]),
    ]
    by_title = {s.title: s for s in sections}
    assert FILING[by_title["Item 1A. Risk Factors"].body:].startswith("Our largest customer")  # the item's text, not the contents line
    assert "Item 7 of this report" in FILING[by_title["Item 1. Business"].start:by_title["Item 1. Business"].end]


def test_a_contracts_table_of_contents_leaves_one_section_per_article():
    text = ("CONSULTING AGREEMENT\nTABLE OF CONTENTS\nARTICLE 1 DEFINITIONS 1\nARTICLE 2 SERVICES 2\n"
            "ARTICLE 3 FEES 3\nARTICLE 4 TERM 4\n"
            "ARTICLE 1 DEFINITIONS\n1.1 Services. The services the Consultant provides under this Agreement.\n"
            "ARTICLE 2 SERVICES\nThe Consultant will advise the Company on its marketing.\n"
            "ARTICLE 3 FEES\nThe Company pays $5,000 a month.\nARTICLE 4 TERM\nThis Agreement runs for two years.\n")
    titles = [h.title for h in find_headings(text)]
    assert titles == ["Consulting Agreement", "Table of Contents", "Article 1 Definitions", "1.1 Services",
                      "Article 2 Services", "Article 3 Fees", "Article 4 Term"]


def test_a_sentence_after_an_item_label_is_not_its_title():
    text = "Overview of the year.\nItem 1A. Risk Factors — special: our largest customer, Globex Inc., accounted for 23% of revenue.\n"
    assert find_headings(text) == []


def test_words_a_filing_writes_in_lower_case_too_are_not_names():
    from hti_git.compile.structure import proper_names

    text = ("Globex Inc. buys widgets. " * 3 + "Our revenue grew. Net revenue fell; our net margin rose and our "
            "net costs and our staff grew. " * 3 + "See Item 7. See Item 8. See Item 9.\n")
    names = [n for n, _ in proper_names(text)]
    assert "Globex Inc" in " ".join(names) and not {"Our", "Net", "Item"} & set(names)


def test_words_that_open_sentences_dates_and_table_rows_are_not_names():
    from hti_git.compile.structure import proper_names

    text = ("The Company reports to Luca Maestri, its Chief Financial Officer, as of September 28, 2024. "
            "Additionally, the report was signed. Although sales grew, costs grew. While Luca Maestri signed, "
            "Ernst audited it on September 30, 2023. Yes \u2610 No \u2612\n") * 3 + "| Total | 391,035 |\n" * 3
    names = [n for n, _ in proper_names(text)]
    assert "Luca Maestri" in names and "Chief Financial Officer" in names and "Ernst" in names
    assert not {"Additionally", "Although", "While", "September", "Yes", "Total"} & set(names)


TABLE = "\n".join(f"{label:<40} $ {n:>8,}   $ {n + 7:>8,}   $ {n + 11:>8,}" for label, n in [
    ("Net revenue", 4512), ("Cost of revenue", 2100), ("Gross margin", 2412), ("Research and development", 801),
    ("Selling, general and administrative", 640), ("Operating income", 971), ("Interest expense", 55),
    ("Net income", 733), ("Diluted earnings per share", 3)] * 4)


def test_a_tables_passages_and_mention_windows_are_whole_rows():
    from hti_git.compile.fast import _sentence_around
    from hti_git.sources.passages import split_passages

    rows = set(TABLE.splitlines())
    for s, e in split_passages(TABLE, 0, len(TABLE)):
        assert set(TABLE[s:e].splitlines()) <= rows  # cut at row ends, never inside a row
    at = TABLE.index("Net income", 1500)
    s, e = _sentence_around(TABLE, at, 300)
    assert s < at < e and set(TABLE[s:e].splitlines()) <= rows


def test_a_filings_subheadings_and_notes_stay_under_their_item():
    text = FILING + """
RESULTS OF OPERATIONS

Revenue grew in every segment.

Liquidity and Capital Resources

We had $1.2 billion of cash.

Net revenue                                   $ 4,512   $ 4,021

Item 8. Financial Statements

1. Summary of Significant Accounting Policies

Basis of presentation. The statements are consolidated.

Item 9A. Controls and Procedures

Our disclosure controls are effective.
"""
    outline = [(s.title, s.parents[-1:]) for s in find_sections(text) if s.parents]
    mdna = "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    assert ("Results of Operations", [mdna]) in outline and ("Liquidity and Capital Resources", [mdna]) in outline
    assert ("1 Summary of Significant Accounting Policies", ["Item 8. Financial Statements"]) in outline
    assert ("Item 9A. Controls and Procedures", ["Part II"]) in outline  # not under a subheading
    assert not any(title.startswith("Net revenue") for title, _ in outline)  # a table's row is no heading


def test_a_contents_line_wrapped_onto_two_lines_is_still_a_contents_entry():
    wrapped = FILING.replace(
        "Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of Equity Securities 33",
        "Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases\nof Equity Securities 33")
    sections = [s for s in find_sections(wrapped) if s.title.startswith("Item 5")]
    assert [s.parents for s in sections] == [["Part II"]]  # the item itself, not its contents line


def test_a_filing_compiles_to_parts_with_their_items():
    record = compile_fast(SourceText(name="acme-10k.txt", text=FILING, media_type="text/plain", raw_sha256="0" * 64,
                                     raw_bytes=len(FILING)))

    def tree(category):
        return {category.name: [s.name for s in category.subjects] + [tree(c) for c in category.children]}

    outline = [tree(c) for c in record.categories]
    flat = repr(outline)
    assert "'Part I': ['Item 1. Business', 'Item 1A. Risk Factors']" in flat
    assert flat.count("Item 1A. Risk Factors") == 1  # the contents line is not a second subject


PACKED_FILING = """FORM 10-K
PART I
Item 1. Business
Company Background
The Company designs, manufactures and markets smartphones, personal computers, tablets and wearables.
PART II
Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations
Segment Operating Performance
The following table shows net sales by reportable segment for 2024 and 2023 (dollars in millions):
Three Months Ended
June 29, 2024 July 1, 2023
Americas $ 167,045 3 % $ 162,560
Total net sales $ 391,035 2 % $ 383,285
Non-CurrentMarketableSecurities
Securities
Cash $ 22,866 $ — $ — $ 22,866 $ 22,866 $ —
Americas
Americas net sales increased during 2024 compared to 2023 due primarily to higher net sales of Services
and the Company's Growth in Emerging Markets
continued through the year, with higher net sales of iPhone in India and Brazil.
Item 8. Financial Statements and Supplementary Data
Notes to Consolidated Financial Statements
Note 1 – Summary of Significant Accounting Policies
Basis of Presentation and Preparation
The consolidated financial statements include the accounts of Apple Inc. and its subsidiaries.
Item 9A. Controls and Procedures
Our disclosure controls are effective.
"""


def test_a_pdfs_filing_without_blank_lines_has_its_subheadings():
    """PDF text has no blank lines: a subheading is a Title Case line after a sentence's, a table's or a
    heading's end and before a paragraph (or another subheading and then a paragraph). Table headers
    and a wrapped line of a sentence are not subheadings."""
    titles = [h.title for h in find_headings(PACKED_FILING)]
    for title in ("Company Background", "Segment Operating Performance", "Americas",
                  "Note 1 – Summary of Significant Accounting Policies", "Basis of Presentation and Preparation"):
        assert title in titles, titles
    assert "Three Months Ended" not in titles  # a table's column header: no paragraph follows
    assert "and the Company's Growth in Emerging Markets" not in titles  # the rest of a sentence
    assert not any(t.startswith("Total net sales") for t in titles)
    # column headers above a row: one run together by PDF text, one above figures, not a paragraph
    assert "Securities" not in titles and "Non-CurrentMarketableSecurities" not in titles
    outline = [(s.title, s.parents[-1:]) for s in find_sections(PACKED_FILING) if s.parents]
    mdna = "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    assert ("Segment Operating Performance", [mdna]) in outline


def test_a_title_line_inside_text_with_blank_lines_still_needs_them():
    """Text with blank lines between paragraphs (Markdown, HTML, most .txt) keeps the blank-line rule."""
    text = PACKED_FILING.replace("\nThe Company designs", "\n\nThe Company designs").replace(".\n", ".\n\n")
    assert "Segment Operating Performance" not in [h.title for h in find_headings(text)]


def test_a_contents_label_whose_heading_goes_on_with_a_title_is_a_contents_entry():
    """A 10-Q's contents list "Part I"; its body's heading is "PART I — FINANCIAL INFORMATION". The
    contents' "Part I" is not a second Part I (nor is it taken for "Part II")."""
    text = """FORM 10-Q
TABLE OF CONTENTS
Page
Part I
Item 1. Financial Statements 1
Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations 13
Part II
Item 1. Legal Proceedings 19
Item 1A. Risk Factors 19
PART I — FINANCIAL INFORMATION
Item 1. Financial Statements
The condensed consolidated financial statements are unaudited and were prepared by the Company.
Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations
Net sales increased during the quarter compared to the same quarter of the prior year overall.
PART II — OTHER INFORMATION
Item 1. Legal Proceedings
The Company is subject to legal proceedings and claims that arise in the ordinary course of business.
Item 1A. Risk Factors
There have been no material changes to the risk factors described in the annual report of the Company.
"""
    titles = [h.title for h in find_headings(text)]
    assert titles.count("Item 1. Financial Statements") == 1 and "Part I" not in titles and "Part II" not in titles
    assert "Part I — Financial Information" in titles and "Part II — Other Information" in titles


def test_an_exhibit_tables_column_header_is_not_an_attachment():
    """A 10-Q's exhibit index printed to PDF wraps its first column's header: "Exhibit" / "Number ..."."""
    text = """Item 5. Other Information
The Company's Chief Executive Officer entered into a trading arrangement during the quarter.
Item 6. Exhibits
Incorporated by
Reference
Exhibit
Number Exhibit Description Form Exhibit
31.1* Rule 13a-14(a) / 15d-14(a) Certification of Chief Executive Officer.
"""
    assert [h.title for h in find_headings(text)] == ["Item 5. Other Information", "Item 6. Exhibits"]


def test_a_word_opening_a_table_cell_is_a_row_label_not_a_name():
    from hti_git.compile.structure import proper_names

    text = ("| Accumulated deficit | (4,726) | (214) |\n| Proceeds from issuance | 1,200 | 900 |\n"
            "| Weighted-average shares | 15,222 | 15,697 |\n") * 3 + "Apple Inc. and Foxconn reported results. " * 3
    names = [n for n, _ in proper_names(text)]
    assert "Foxconn" in names and not {"Accumulated", "Proceeds", "Weighted"} & set(names)
