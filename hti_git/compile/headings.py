"""Headings without a model: which lines of a document head a part of it.

A heading is a *line* that names what follows: "Article XIII. Limitation of Liability", "ARTICLE 4
TERMINATION", "7.10 Governing Law. This Agreement ...", "Section 4.2 Termination for Cause", "Annex A",
"GENERAL PROVISIONS". Body text that merely starts a line (a wrapped reference "Article 4 below, may
not ...", a capitalised sentence "NO PARTY SHALL BE LIABLE ...") is not one: a title is short, has
Title Case or capital words, no verb of obligation, and does not run on into a clause.

Text without line layout (a whole contract on a few very long lines, as plain-text exports often
are) is read inline as well: a numbered title after a sentence end counts there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hti_git.text import GAP, is_table_row

SMALL_WORDS = frozenset(
    "of and to the in for or on by a an with as at its from upon under between into against not no nor vs "
    "without within after before during through over per via than".split()
)
# A heading names a part of the document; a sentence states something. These words say "sentence".
_SENTENCE_WORDS = frozenset(
    "shall will may must is are be been was were has have hereby agrees agree means".split()
)
LONG_LINE = 300  # characters; a longer line is a paragraph, read for inline headings too
MAX_TITLE_WORDS = 12

_ROMAN = r"[IVXLC]{1,7}"
_NUM = rf"(?:{_ROMAN}|\d{{1,3}}(?:\.\d{{1,3}}){{0,3}}|[A-Z](?=[.:\s]))"
_LABEL = re.compile(
    rf"^(ARTICLE|Article|SECTION|Section|PART|Part|CHAPTER|Chapter)[ \t]+({_NUM})\.?(?=[\s:–—-]|$)[ \t]*[:.\-–—]?[ \t]*(.*)$"
)
_ANNEX = re.compile(
    r"^(EXHIBIT|Exhibit|ANNEX|Annex|SCHEDULE|Schedule|APPENDIX|Appendix|ATTACHMENT|Attachment|ADDENDUM|Addendum)\b"
    r"(?:[ \t]+([A-Z]{1,2}|\d{1,3}(?:\.\d{1,3})?|[IVX]{1,5})(?:-\d{1,3})?\b)?\.?[ \t]*[:.\-–—]?[ \t]*(.*)$"
)
_COLUMN_HEAD = re.compile(r"(?:Number|No\.|#|Description|Title|Date)\b", re.IGNORECASE)
# A filing's items: "Item 1A. Risk Factors", "ITEM 7. MANAGEMENT'S DISCUSSION ...", under its Parts
_ITEM = re.compile(r"^(ITEM|Item)[ \t]+(\d{1,2}[A-C]?)\b\.?[ \t]*[:.\-–—]?[ \t]*(.*)$")
ITEM_TITLE_CHARS = 160  # an item's title may be long ("Market for Registrant's Common Equity, ...")
ITEM_TITLE_WORDS = 20
SENTENCE_GAP = re.compile(r"[.;!?][ \t]+[A-Z]")  # a sentence's end and the next one's start
CONTENTS_RUN = 4  # this many headings in a row with no text between them are a table of contents
_PAGE_REF = re.compile(r"[ \t.·…]*\b(?:\d{1,3}|[ivxlc]{1,6})$")  # "Risk Factors ....... 12"
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,3}){0,3})(\.?)[ \t]+(\S.*)$")
_HTML_TAGS = re.compile(r"(?:<[a-zA-Z][\w-]*(?:\s[^<>]{0,80})?>\s*)+")
_HTML_CLOSING = re.compile(r"(?:\s*</[a-zA-Z][\w-]*>)+\s*$")
_MD = re.compile(r"^(#{1,6})[ \t]+(\S.{0,150})$")
_SCENE = re.compile(r"^((?:\d+[ \t]+)?(?:INT\.|EXT\.|INT/EXT\.?|I/E\.?)[^\n]{2,100})$")
_TITLE_END = re.compile(r"(?:\.|[ \t]*:|[ \t]+[–—-])[ \t]+(?=[\"“(]?[A-Z0-9(])|[ \t]+(?=\d{1,2}\.\d{1,2}[ \t])")
# Inline, in run-on text: "... as follows: ARTICLE 1 CONTRACT FOR SERVICES 1.1 Engagement of Consultant. The ..."
_INLINE_NUMBERED = re.compile(
    r"(?:(?<=[.:;)\]]\s)|(?<=[A-Z]{2}\s)|(?<=[ \t]{3}))(\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+"
    r"((?:[A-Z][\w'’&\-/]*|of|and|to|the|in|for|or|on|by|a|an|with|as|at|its)"
    r"(?:[ \t,;]+(?:[A-Z][\w'’&\-/]*|of|and|to|the|in|for|or|on|by|a|an|with|as|at|its)){0,9})"
    r"(?:(?:\.|[ \t]*:)(?=\s)|[ \t]{2,}(?=\1\.\d))"
)
_INLINE_LABEL = re.compile(
    rf"(?:(?<=[.:;)\]]\s)|(?<=[ \t]{{3}}))(ARTICLE|Article|SECTION|Section)[ \t]+({_NUM})\.?[ \t]+"
    r"((?:[A-Z][A-Z'’&\-]+(?:[ \t,]+|$)){1,8}|(?:[A-Z][\w'’&\-]*(?:[ \t]+(?:of|and|to|the|for|or|on|in)?[ \t]*)?){1,8}(?=\.))"
)


@dataclass
class Heading:
    """A heading found in the text: where it starts, its title, its nesting level, where its body starts."""

    start: int
    end: int  # end of the heading text itself
    title: str
    level: int
    number: str = ""
    body: int = -1  # where the text under the heading starts (-1: at `end`)
    kind: str = ""  # "annex": an exhibit, annex, schedule or appendix (its own branch); "untitled": a numbered clause without a title

    def __post_init__(self) -> None:
        if self.body < 0:
            self.body = self.end


def roman(value: str) -> int | None:
    numerals = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
    if not value or any(c not in numerals for c in value):
        return None
    total = 0
    for a, b in zip(value, value[1:] + " "):
        v = numerals[a]
        total += -v if b in numerals and numerals[b] > v else v
    return total


def display(title: str) -> str:
    """A title as shown: as written, except that a title in capitals is put in Title Case."""
    letters = [c for c in title if c.isalpha()]
    if not letters or any(c.islower() for c in letters):
        return title
    out = []
    for i, word in enumerate(title.split(" ")):
        core = word.strip(".,:;()")
        if re.fullmatch(_ROMAN, core) and roman(core) and len(core) <= 4 and core not in ("DI", "MC", "CC", "LC", "CD"):
            out.append(word)  # a Roman numeral stays one
        elif i > 0 and core.lower() in SMALL_WORDS:
            out.append(word.lower())
        elif "." in core or len(core) == 1:
            out.append(word)  # an abbreviation (U.S.) or a letter (Exhibit A)
        else:
            out.append("-".join(_capitalise(p.lower()) for p in word.split("-")))
    return " ".join(out)


def _capitalise(word: str) -> str:
    for i, c in enumerate(word):
        if c.isalpha():
            return word[:i] + c.upper() + word[i + 1:]
    return word


def ends_sentence(line: str) -> bool:
    """The line ends a sentence, a list item or a label: what may come before a heading."""
    line = line.strip()
    return not line or len(line) <= 60 or line.endswith((".", ":", ";", "!", "?", ")", '"', "”", "]"))


def title_like(text: str, max_words: int = MAX_TITLE_WORDS, max_chars: int = 100) -> bool:
    """Short, in Title Case or capitals, no verb of obligation, not cut off mid-list."""
    text = text.strip()
    if not text or len(text) > max_chars or text.endswith((",", ";")) or not (text[0].isupper() or text[0].isdigit()):
        return False
    words = text.rstrip(".:").split()
    if not 1 <= len(words) <= max_words:
        return False
    for word in words:
        if re.fullmatch(r"\d+(?:\.\d+)+\.?", word):
            return False  # another clause's number: two headings run together, or a reference
        core = word.strip("\"“”'’(),.:;&")
        if not core:
            continue
        if core.lower() in _SENTENCE_WORDS:
            return False
        if not (core[0].isupper() or core[0].isdigit() or core.lower() in SMALL_WORDS or core[0] in "-–—/"):
            return False
    if len(words) > 1 and words[-1].lower() in SMALL_WORDS:
        return False  # cut off mid-phrase ("... of This Agreement or the")
    return any(len(w.strip(".,:;()")) > 1 for w in words)


def _caps_heading(line: str, prev: str, nxt: str) -> bool:
    """A line in capitals that is a heading, not a capitalised sentence or a line of a capitals block."""
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 4 or any(c.islower() for c in letters) or len(line) > 80:
        return False
    if not re.search(r"[A-Z]{4,}", line) or not title_like(line):
        return False
    if line.endswith(".") and len(line.split()) > 6:
        return False
    if not ends_sentence(prev):
        return False  # the rest of a sentence wrapped onto this line
    if len(nxt) > 60 and not any(c.islower() for c in nxt) and not line.endswith((".", ":")):
        return False  # the first line of a paragraph in capitals (a legend, a disclaimer)
    return True


def _split_title(rest: str) -> tuple[str, int] | None:
    """(title, length of the heading part) when `rest` is a title, or a title then its body."""
    if title_like(rest) and not _TITLE_END.search(rest):
        return rest.rstrip(" .:"), len(rest)
    m = _TITLE_END.search(rest)
    if m and m.start() > 0 and title_like(rest[: m.start()]):
        return rest[: m.start()].strip(), m.end()
    if title_like(rest) and rest.endswith((".", ":")):
        return rest.rstrip(" .:"), len(rest)
    return None


def _plausible(num: str) -> bool:
    parts = num.split(".")
    return 0 < int(parts[0]) <= 60 and all(int(p) <= 200 for p in parts[1:] if p)


def without_html(line: str) -> str:
    """A line of Markdown converted from HTML without the tags around its text ("<div align='center'>
    PART I</div>")."""
    return _strip_html(line.strip())[0]


def _strip_html(line: str) -> tuple[str, int]:
    """`line` (stripped) without its opening and closing tags, and how many characters the opening
    tags took."""
    skipped = 0
    if tag := _HTML_TAGS.match(line):
        line, skipped = line[tag.end():], tag.end()
    return _HTML_CLOSING.sub("", line), skipped


def line_heading(line: str, start: int, nxt: str, nxt_start: int, prev: str) -> Heading | None:
    """The heading that `line` (starting at offset `start`) opens, if any. `nxt` may hold its title."""
    stripped = line.strip()
    lead = len(line) - len(line.lstrip())
    at = start + lead
    if not stripped:
        return None
    stripped, skipped = _strip_html(stripped)
    at += skipped
    if not stripped:
        return None
    if m := _MD.match(stripped):
        return Heading(at, start + len(line.rstrip()), m.group(2).strip(" #"), len(m.group(1)))
    if _SCENE.match(stripped):
        return Heading(at, start + len(line.rstrip()), stripped, 1)
    if page := re.match(r"\d{1,3}[ \t]+(?=(?:ARTICLE|Article|SECTION|Section|EXHIBIT|Exhibit|ANNEX|Annex|APPENDIX|Appendix"
                        r"|SCHEDULE|Schedule)\b|\d{1,2}\.\d{1,3}\.?[ \t]+[A-Z])", stripped):
        stripped, at = stripped[page.end():], at + page.end()  # a page number run into the next heading
    line_at = start + lead  # where the line starts, page number included
    if m := _LABEL.match(stripped):
        return _label_heading(m, at, nxt, nxt_start, prev)
    if m := _ITEM.match(stripped):
        return _item_heading(m, at, nxt, nxt_start, prev)
    if m := _ANNEX.match(stripped):
        rest = m.group(3).strip()
        label = " ".join(p for p in (m.group(1).title(), m.group(2) or "") if p)
        if page and m.group(2) and len(stripped) > LONG_LINE and rest[:1].isupper() and not title_like(rest):
            # a page run into one line ("9 Annex A THIS WARRANT AND THE SHARES ...") that opens with an
            # attachment's label: the label is the heading, the rest its text
            return Heading(line_at, at + m.start(3), label, 0, m.group(2), kind="annex")  # the page number with it
        if (rest and not title_like(rest)) or not ends_sentence(prev) or nxt.strip()[:1].islower():
            return None  # "Exhibit G." wrapped from "... as set forth in" is a reference
        if not m.group(2) and not rest and _COLUMN_HEAD.match(nxt.strip()):
            return None  # "Exhibit" above "Number Exhibit Description ...": a table's column header
        title = f"{label} {display(rest.rstrip(' .:'))}".strip()
        return Heading(at, start + len(line.rstrip()), title, 0, m.group(2) or "", kind="annex")
    if m := _NUMBERED.match(stripped):
        return _numbered_heading(m, at, prev)
    if _caps_heading(stripped, prev.strip(), nxt.strip()):
        return Heading(at, start + len(line.rstrip()), display(stripped.rstrip(" .:")), 1)
    return None


def _label_heading(m: re.Match, at: int, nxt: str, nxt_start: int, prev: str) -> Heading | None:
    word, num, rest = m.group(1), m.group(2), m.group(3).strip()
    label_end = at + m.start(3) if rest else at + m.end(2)
    number = str(roman(num) or num)
    level = 1 if word.lower() in ("article", "part", "chapter") or "." not in num else 1 + num.count(".")
    label = m.group(0)[: m.start(3)].strip() if rest else m.group(0).strip()
    if not rest:  # "ARTICLE 4" alone: its title is the next line when that line is a title
        title_line = nxt.strip()
        if (title_line and title_like(title_line) and not _NUMBERED.match(title_line) and not _LABEL.match(title_line)
                and not _ITEM.match(title_line)):
            end = nxt_start + len(nxt) - len(nxt.lstrip()) + len(title_line)
            return Heading(at, end, f"{display(label)} {display(title_line.rstrip(' .:'))}", level, number)
        return Heading(at, label_end, display(label.rstrip(" .:")), level, number)
    split = _split_title(rest)
    if split is None:
        if not rest[0].isupper() or not ends_sentence(prev):
            return None  # "Article 4 below, may not be offered ...", "Section 19 (Warranties ...": references
        return Heading(at, label_end, display(label.rstrip(" .:")), level, number, body=label_end)
    title, length = split
    end = at + m.start(3) + len(title)
    return Heading(at, end, f"{display(label)} {display(title)}", level, number, body=at + m.start(3) + length)


def _item_heading(m: re.Match, at: int, nxt: str, nxt_start: int, prev: str) -> Heading | None:
    """A filing's item, one level under its Part: "Item 1A. Risk Factors" (a contents line's page
    number dropped), or "ITEM 7." alone with its title on the next line."""
    label, rest = f"Item {m.group(2).upper()}.", m.group(3).strip()
    if not ends_sentence(prev) and not prev.rstrip()[-1:].isdigit():  # a contents line ends on its page
        return None  # "... described in\nItem 7 of this report": a reference wrapped onto the line
    end = at + len(m.group(0).rstrip())
    if not rest:
        title_line = nxt.strip()
        title = _PAGE_REF.sub("", title_line).rstrip(" .:")
        if title and _item_title(title) and not _ITEM.match(title_line):
            end = nxt_start + len(nxt) - len(nxt.lstrip()) + len(title_line)
            return Heading(at, end, f"{label} {display(title)}", 2, m.group(2))
        return Heading(at, end, label.rstrip("."), 2, m.group(2))
    if not rest[0].isupper() and rest[0] not in "[(\"“":
        return None  # "Item 2 of the registration statement ...": a reference
    if _item_title(title := _PAGE_REF.sub("", rest).rstrip(" .:")):
        return Heading(at, end, f"{label} {display(title)}", 2, m.group(2))
    split = _split_title(rest)  # "Item 2. Properties. We lease ...": the title, then its text
    if split is None:
        return None
    title, length = split
    return Heading(at, at + m.start(3) + len(title), f"{label} {display(title)}", 2, m.group(2),
                   body=at + m.start(3) + length)


def _item_title(text: str) -> bool:
    return title_like(text.strip("[]"), ITEM_TITLE_WORDS, ITEM_TITLE_CHARS) and not SENTENCE_GAP.search(text)


def _numbered_heading(m: re.Match, at: int, prev: str) -> Heading | None:
    num, dot, rest = m.group(1), m.group(2), m.group(3)
    if not _plausible(num) or not (rest[0].isupper() or rest[0] in "\"“("):
        return None
    level = 1 + num.count(".")
    split = _split_title(rest)
    if split is not None:
        title, length = split
        return Heading(at, at + m.start(3) + len(title), f"{num} {display(title)}", level, num,
                       body=at + m.start(3) + length)
    if ("." not in num and not dot) or not ends_sentence(prev):
        return None  # "30 Business Days after ..." is a wrapped line, not a clause
    # A numbered clause without a title ("7.5 The Company acknowledges ..."): named by its first words.
    words = re.split(r"[,;:.(]", rest, maxsplit=1)[0].split()[:6]
    if len(words) < 3:
        words = rest.split()[:6]
    name = " ".join(words) + ("…" if len(words) < len(rest.split()) else "")
    return Heading(at, at + m.end(2), f"{num} {name}", level, num, body=at + m.start(3), kind="untitled")


def _inline_headings(line: str, start: int) -> list[Heading]:
    """Headings inside one long run-on line, after a sentence end."""
    out = []
    for m in _INLINE_LABEL.finditer(line):
        title = m.group(3).strip(" ,")
        if not title or not title_like(title):
            continue
        word, num = m.group(1), m.group(2)
        level = 1 if word.lower() == "article" or "." not in num else 1 + num.count(".")
        end = start + m.start(3) + len(title)
        out.append(Heading(start + m.start(), end, f"{display(word)} {num} {display(title)}", level,
                           str(roman(num) or num)))
    for m in _INLINE_NUMBERED.finditer(line):
        num, title = m.group(1), m.group(2).strip()
        first = title.split()[0]
        if not _plausible(num) or (first.lower() in SMALL_WORDS and first != "No") or not title_like(title):
            continue
        if re.search(r"\b(?:ARTICLE|Article|SECTION|Section)[ \t]+[\dIVX]|\b\d", title):
            continue  # "7 ARTICLE 6 NOTICES 6.1 ...": a page number before the next heading, not a title
        out.append(Heading(start + m.start(), start + m.start(2) + len(title), f"{num} {display(title)}",
                           1 + num.count("."), num))
    return out


def find_headings(text: str, untitled: bool = False) -> list[Heading]:
    """Headings of every style we know, one per start offset, in document order.

    With `untitled`, numbered clauses without a title ("7.5 The Company acknowledges ...") are included:
    they start a section of their own, but they are not headings to list in an outline.
    """
    lines = []
    pos = 0
    for raw in text.split("\n"):
        lines.append((raw, pos))
        pos += len(raw) + 1
    found: dict[int, Heading] = {}
    content = [i for i, (raw, _) in enumerate(lines) if raw.strip()]
    taken_lines: set[int] = set()
    subheadings: list[Heading] = []  # Title Case lines between blank lines: a filing's subheadings
    first_body = _first_body_offset(text)
    packed = bool(content) and content[-1] - content[0] + 1 - len(content) < PACKED * len(content)  # blank lines within
    for k, i in enumerate(content):
        if i in taken_lines:
            continue
        raw, start = lines[i]
        prev = lines[content[k - 1]][0] if k > 0 else ""
        nxt_i = content[k + 1] if k + 1 < len(content) else None
        nxt, nxt_start = (lines[nxt_i] if nxt_i is not None else ("", len(text)))
        h = line_heading(raw, start, nxt, nxt_start, prev)
        if h is not None and h.kind == "annex" and (h.start < first_body or not any(
                f.kind != "annex" for f in found.values())):
            h = None  # "Exhibit 10.7" above the title labels the filing; it is not an annex
        if h is not None:
            found.setdefault(h.start, h)
            if nxt_i is not None and h.end > nxt_start:
                taken_lines.add(nxt_i)  # the next line was this heading's title
        elif h is None and _subheading_line(raw, lines, i, packed):
            subheadings.append(Heading(start + len(raw) - len(raw.lstrip()), start + len(raw.rstrip()), raw.strip(), 1))
        if len(raw) > LONG_LINE or GAP.search(raw):  # a page joined into one line keeps its breaks as gaps
            for inline in _inline_headings(raw, start):
                if not any(h.start <= inline.start < h.end for h in found.values()):
                    found[inline.start] = inline  # not "4. MISCELLANEOUS" inside "ARTICLE 4. MISCELLANEOUS"
    headings = [found[k] for k in sorted(found)]
    if sum(1 for h in headings if _ITEM_TITLE.match(h.title)) >= FILING_ITEMS:
        headings = _filing_levels(headings, subheadings)
    kept = _without_contents(text, headings)
    return [h for h in kept if untitled or h.kind != "untitled"]


FILING_ITEMS = 3  # a document with this many "Item N." headings is a filing: its Parts and Items lead
_ITEM_TITLE = re.compile(r"Item \d{1,2}[A-C]?\.")
_PART_TITLE = re.compile(r"Part [IVX]+\b")
_NOT_A_TITLE = re.compile(r"\$|\d{2,}|\S {3,}\S| \| ")  # figures, column gaps, cell bars: a table's row


def _subheading_line(raw: str, lines: list[tuple[str, int]], i: int, packed: bool) -> bool:
    """A short Title Case line standing alone ("Liquidity and Capital Resources"): a filing's subheading.
    Between blank lines; or, in `packed` text (a PDF's: no blank lines), after a line that ends a
    sentence, a table or a page, and before the first line of a paragraph. Not a table's row (figures,
    column gaps) nor a sentence."""
    if not packed and ((i > 0 and lines[i - 1][0].strip()) or (i + 1 < len(lines) and lines[i + 1][0].strip())):
        return False  # not between blank lines (the common case, checked first)
    line = raw.strip()
    if not 3 <= len(line) <= 80 or not any(c.islower() for c in line) or _NOT_A_TITLE.search(line):
        return False
    if not title_like(line) or line.endswith((".", ",", ";", ":")):
        return False
    if not packed:
        return True
    if _GLUED.search(line):
        return False  # "Non-CurrentMarketableSecurities": a table header whose words PDF text ran together
    prev, nxt, after = (lines[j][0].strip() if 0 <= j < len(lines) else "" for j in (i - 1, i + 1, i + 2))
    # a paragraph follows, or another subheading and then a paragraph ("Note 1 – Summary ...", "Basis of ...")
    return _ends_block(prev) and (_paragraph(nxt) or (title_like(nxt) and not _NOT_A_TITLE.search(nxt)
                                                      and _paragraph(after)))


def _ends_block(line: str) -> bool:
    """What may come before a subheading in packed text: nothing, the end of a sentence, a table's row,
    a page's footer (ending in its number), or a heading."""
    return (not line or line.endswith((".", ":", "?", "!", ")", "”", '"', "%")) or line[-1].isdigit()
            or title_like(line) or bool(_ITEM.match(line)) or is_table_row(line))


def _paragraph(line: str) -> bool:
    """The first line of a paragraph in packed text: a long line starting as a sentence does (not a
    table's row: "Securities" above "Cash $ 22,866 $ — $ 22,866" is a column header)."""
    return (len(line) >= 40 and (line[0].isupper() or line[0].isdigit() or line[0] in "“\"•(")
            and not title_like(line) and not is_table_row(line))


_GLUED = re.compile(r"[a-z][A-Z][a-z]+[A-Z]")  # two capitals inside one word: words run together
PACKED = 0.02  # text with fewer blank lines than this share of its lines is packed (PDF text has none)


def _filing_levels(headings: list[Heading], subheadings: list[Heading]) -> list[Heading]:
    """A filing's outline: Parts (level 1), Items (2), and every other heading below its Item (its
    level + 2: a capitals subheading or a note "1. Summary of Significant Accounting Policies" is not
    a sibling of the Parts); Title Case subheadings between blank lines join at level 3."""
    taken = {h.start for h in headings}
    out = []
    for h in sorted(headings + [s for s in subheadings if s.start not in taken], key=lambda h: h.start):
        if not (_PART_TITLE.match(h.title) or _ITEM_TITLE.match(h.title) or h.kind == "annex"):
            h.level += 2
        out.append(h)
    return out


def _without_contents(text: str, headings: list[Heading]) -> list[Heading]:
    """Drop a table of contents' entries: in a run of CONTENTS_RUN or more headings with nothing but
    page numbers between them, the headings whose titles come again later, where their text is. The
    others ("Table of Contents", the document's title) stay, and the list is their text."""
    blank = [_contents_line_rest(text[h.body: nxt.start]) for h, nxt in zip(headings, headings[1:])] + [False]
    keys = [_key(h.title) for h in headings]
    out: list[Heading] = []
    run: list[int] = []

    def close() -> None:
        if len(run) < CONTENTS_RUN:
            out.extend(headings[i] for i in run)
        else:
            out.extend(headings[i] for i in run if not _listed_again(keys[i], set(keys[i + 1:])))
        run.clear()

    for i, h in enumerate(headings):
        if any(keys[j] == keys[i] for j in run):
            close()  # a title met again: the document's body starts here
        if blank[i]:
            run.append(i)
        else:
            close()
            out.append(h)
    close()
    return out


def _listed_again(key: str, later: set[str]) -> bool:
    """A contents entry's title comes again, whole or as the start of it (a long title wrapped in one
    of the two places; a label "Part I" whose heading goes on "Part I — Financial Information")."""
    return key in later or any(k.startswith(key + " ") or (min(len(k), len(key)) >= 12 and (
        k.startswith(key) or key.startswith(k))) for k in later)


def _contents_line_rest(body: str) -> bool:
    """Whether the text between two headings is only what a contents line leaves: nothing, a page
    number, or the wrapped end of a long title with its page number ("of Equity Securities 21")."""
    rest = body.strip(" \t\n.·…")
    if not rest:
        return True
    wrapped = _PAGE_REF.sub("", rest).strip(" \t.·…")
    return wrapped != rest and "\n" not in wrapped and len(wrapped) <= 80 and not SENTENCE_GAP.search(wrapped)


def _key(title: str) -> str:
    """A title as a contents line and its heading both read: case, spacing and page number aside."""
    return " ".join(_PAGE_REF.sub("", title).lower().split())


def _first_body_offset(text: str) -> int:
    """Where the body begins: the first line long enough to be prose (labels and titles come before)."""
    pos = 0
    for raw in text.split("\n"):
        if len(raw.strip()) > 60:
            return pos
        pos += len(raw) + 1
    return 0
