"""One fixture per cleaning rule: what goes, and the content right next to it that must stay."""

from __future__ import annotations

from hti_git.sources.clean import clean_pages, clean_text, split_pages

GOODS = ["", "timber", "cement", "steel", "glass", "copper", "granite", "marble"]


def body(n: int) -> str:
    """Two lines of page content whose wording differs from page to page, as in real documents."""
    return f"Clause {n}.1 The Supplier shall deliver the {GOODS[n]} on time.\nThe Buyer pays for the {GOODS[n]} later."


def test_form_feeds_split_pages_and_vanish():
    assert clean_text("first page\fsecond page\n") == "first page\nsecond page\n"
    assert split_pages("a\fb") == ["a", "b"]


def test_crlf_nbsp_tabs_and_zero_width_are_normalised():
    assert clean_text("a\u00a0b\r\nc\td\u200be\r\n") == "a b\nc       de\n"


def test_pdfium_greek_question_mark_becomes_semicolon():
    # U+037E is canonically a semicolon; left alone, "provided; however" is not findable.
    assert clean_text("provided\u037e however") == "provided; however\n"


def test_pdfium_fffe_becomes_a_hyphen():
    assert clean_text("royalty\ufffefree licence") == "royalty-free licence\n"


def test_bare_page_numbers_at_page_edges_are_removed():
    pages = [
        f"{body(1)}\n1",
        f"- 2 -\n{body(2)}",
        f"{body(3)}\nPage 3 of 4",
        f"iv\n{body(4)}",
    ]
    text, _ = clean_pages(pages)
    lines = text.splitlines()
    assert "1" not in lines and "- 2 -" not in lines and "Page 3 of 4" not in lines and "iv" not in lines
    assert "The Buyer pays for the steel later." in lines
    assert len(lines) == 8


def test_numbers_inside_a_page_are_content():
    page = "Table of fees\nItem\n3\nUnits sold\n12\nTotal due by the Buyer on delivery"
    text, _ = clean_pages(["Opening words\n" + page + "\nand then the closing words", body(2)])
    assert "\n3\n" in text and "\n12\n" in text


def test_bare_number_ends_a_page_but_not_an_unpaged_text():
    assert clean_pages(["The whole deal.\n1"]) == ("The whole deal.\n", (0,))
    assert clean_text("The answer is\n\n42\n") == "The answer is\n\n42\n"


def test_folios_counting_up_mid_page_are_removed():
    # An EDGAR text printed to PDF: the original page numbers land mid-page, even mid-sentence.
    paragraphs = [f"Section {n}. The {GOODS[n]} clause.\n" + "\n".join(f"term {n}.{k} applies" for k in range(16))
                  for n in range(1, 5)]
    raw = "\n 2\n".join(paragraphs[:2]) + "\n 3\n" + paragraphs[2] + "\n 4\n" + paragraphs[3]
    text = clean_text(raw)
    assert "\n 2\n" not in text and "\n 3\n" not in text and "\n 4\n" not in text
    assert "term 1.15 applies\nSection 2. The cement clause." in text
    # Numbers close together are a table column, not folios.
    table = "Qty\n1\n2\n3\n4\n"
    assert clean_text(table) == table


def test_unambiguous_page_labels_go_anywhere():
    text = clean_text("Intro paragraph one.\nline two\nline three\nline four\n- 7 -\nmore text\nmore\nmore\nend\n")
    assert "- 7 -" not in text and "line four\nmore text" in text


def test_running_header_and_footer_removed_first_occurrence_kept():
    pages = [f"ACME Corp Confidential\n{body(n)}\nSupply Agreement v{n} - draft" for n in range(1, 6)]
    text, _ = clean_pages(pages)
    assert text.count("ACME Corp Confidential") == 1
    assert text.startswith("ACME Corp Confidential\n")
    # Footers that differ only by digits are one running footer.
    assert text.count("Supply Agreement v") == 1
    for n in range(1, 6):
        assert f"Clause {n}.1 The Supplier shall deliver the {GOODS[n]} on time." in text


def test_lines_differing_in_several_numbers_are_content_not_headers():
    pages = [f"Item {n}.1: deliver lot {n}\nfree text {GOODS[n]}" for n in range(1, 6)]
    text, _ = clean_pages(pages)
    assert all(f"Item {n}.1: deliver lot {n}" in text for n in range(1, 6))


def test_line_repeated_on_few_pages_is_not_a_header():
    pages = [body(n) for n in range(1, 7)]
    pages[0] = "Notice to the Buyer\n" + pages[0]
    pages[3] = "Notice to the Buyer\n" + pages[3]
    text, _ = clean_pages(pages)
    assert text.count("Notice to the Buyer") == 2


def test_numbers_beside_a_removed_banner_are_removed():
    # EDGAR text joins several original pages into one PDF page: "6\n7\nbanner" mid-page.
    pages = [
        f"*****Confidential Treatment requested\n{body(n)}\n {n * 2}\n {n * 2 + 1}\n"
        f"*****Confidential Treatment requested\nClause {n}.3 The {GOODS[n]} stays."
        for n in range(1, 5)
    ]
    text, _ = clean_pages(pages)
    assert text.count("*****Confidential Treatment requested") == 1
    assert "\n 4\n" not in text and "\n 5\n" not in text
    assert "Clause 2.3 The cement stays." in text


def test_hyphenation_across_line_end_is_joined():
    assert clean_text("the parties' agree-\nment is final\n") == "the parties' agreement is final\n"


def test_hyphenation_across_a_page_break_is_joined():
    text, starts = clean_pages(["The agree-", "ment is final"])
    assert text == "The agreement is final\n"
    assert starts == (0, len("The agree"))


def test_real_hyphens_at_line_end_stay():
    assert clean_text("a non-\nexclusive licence") == "a non-\nexclusive licence\n"
    assert clean_text("Know-\nHow and Patents") == "Know-\nHow and Patents\n"
    assert clean_text("long-\nterm loan\n") == "long-\nterm loan\n"
    # The document itself spells the compound with a hyphen elsewhere.
    assert clean_text("a cost-\nplus fee; the cost-plus fee\n") == "a cost-\nplus fee; the cost-plus fee\n"
    assert clean_text("Section 2-\n3 applies") == "Section 2-\n3 applies\n"


def test_blank_line_runs_collapse():
    assert clean_text("\n\n\none\n\n\n\n\ntwo\n \n\t\nthree\n\n\n") == "one\n\ntwo\n\nthree\n"


def test_edgar_source_banner_removed_everywhere():
    text = clean_text("terms apply to\nSource: INVENDA CORP, S-1/A, 8/28/2000\nall users\n")
    assert text == "terms apply to\nall users\n"
    kept = "Source: the Buyer's own records, as kept\n"
    assert clean_text(kept) == kept


def test_edgar_page_markers_and_sgml_tags_removed():
    raw = "<DOCUMENT>\n<TYPE>EX-10.6\n<TEXT>\nDistribution terms.\n<PAGE> 2\nMore terms.\n</TEXT>\n</DOCUMENT>\n"
    assert clean_text(raw) == "Distribution terms.\nMore terms.\n"
    assert split_pages("a\n<PAGE>  2\nb") == ["a\n", "\nb"]


def test_table_of_contents_running_links():
    raw = ("Table of Contents\n1. Definitions ... 2\n\fTable of Contents\nThe parties agree.\n"
           "\fBack to Table of Contents\nThe end.\n")
    text = clean_text(raw)
    assert text == "Table of Contents\n1. Definitions ... 2\nThe parties agree.\nThe end.\n"


def test_page_starts_follow_the_cleaning():
    pages = [f"\n\nHEADER LINE OF THE DEAL\n{body(n)}\n\n\n{n}\n" for n in range(1, 5)]
    text, starts = clean_pages(pages)
    assert len(starts) == 4 and starts[0] == 0
    for n, start in enumerate(starts, 1):
        first = "HEADER LINE OF THE DEAL" if n == 1 else f"Clause {n}.1"
        assert text[start:].startswith(first)


def test_empty_page_starts_where_the_next_begins():
    text, starts = clean_pages(["one", "  \n", "three"])
    assert text == "one\nthree\n"
    assert starts == (0, 4, 4)
