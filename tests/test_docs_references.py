"""Every "digest ..." reference in the repository resolves to an anchor in docs/papers.md.

The package's docstrings, notebooks and docs cite the implementation digests of the five papers
("digest 000 section 2.4", "digest 003 Algorithm 6", "digest P15", ...). Those digests are not shipped;
``docs/papers.md`` is the student-facing replacement, with one HTML anchor per cited item. This test keeps
the two in step.

Scanned: ``unlearnkit/**/*.py``, ``notebooks/*.ipynb`` (markdown and code cell sources), ``docs/*.md``
and ``README.md``. Before matching, Python comment markers at line starts are dropped and every run of
whitespace becomes one space, so a reference broken over two lines still matches.

Matching rules (case-insensitive):

1. A reference starts at the word ``digest`` or ``digests`` (optionally ``digest's``). ``digest_x`` and
   ``.digest()``-style words without a number or item after them are not references.
2. An optional paper number follows: three digits (``000`` .. ``004``); ``digests 000 and 004`` names two.
   A path ``papers/digests/NNN_name.md`` is a reference to paper NNN.
3. Then a list of items, separated by ``,`` ``;`` ``/`` or ``and``. The first item may be a bare number
   (``digest 2.5``, ``digest 4`` = section); later items need a keyword or a dotted number. Item kinds
   and the anchor suffix each gives:

   ==========================================  =====================
   ``P6``, ``pitfall 16``, ``pitfall P3``       ``-p6`` / ``-p16``
   ``P10a``                                     ``-p10a``
   ``section 2.4``, ``sections 4-5``, ``§2.4``,  ``-s2.4`` (a range
   ``s3.4``, ``2.4``, ``4``                     checks its first end)
   ``Algorithm 6``, ``Alg. 4``                  ``-alg6``
   ``Eq. (4)``, ``eq. 5``                       ``-eq4``
   ``Lemma 1``, ``Lemma A.11``                  ``-lemma1``, ``-lemmaA.11``
   ``Assumption 4.7``                           ``-assumption4.7``
   ``Table 2``, ``table 3.6``                   ``-table2``, ``-table3.6``
   ``Appendix A``                               ``-appA``
   ==========================================  =====================

4. A reference without a paper number takes the file's paper: the one paper number that the file's other
   digest references name. A file whose bare references cannot be placed that way (it names no paper, or
   several) is listed in ``FILE_PAPER``, by hand from the file's context, per file or per item.
5. The anchor is ``digest-NNN`` plus the suffix, e.g. ``digest-000-p3``, ``digest-003-s3.3``,
   ``digest-003-alg6``; a reference with a paper number but no item resolves to ``digest-NNN``. It must
   exist in docs/papers.md as ``<a id="..."></a>``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS_MD = ROOT / "docs" / "papers.md"
PAPERS = ("000", "001", "002", "003", "004")

# Bare references (no paper number) whose file names no paper, or several: the paper meant, read by hand
# from the file's context. A value is a paper for the whole file, or a dict {anchor suffix: paper}.
FILE_PAPER = {
    # RR-DU modules: "digest P15" is RR-DU's "what exactly is the certifier" pitfall.
    "unlearnkit/methods/rrdu/mixture.py": "000",
    "unlearnkit/methods/rrdu/noisy_start.py": "000",
    "unlearnkit/methods/rrdu/sound.py": "000",
    "unlearnkit/experiments/rrdu/frontier.py": "000",
    # The reference table mixes papers: P17 sits on an RR-DU row (ASR of a clean model), §5.2 on a
    # Newton row (Table III anomalies).
    "unlearnkit/reproduce/reference.py": {"-p17": "000", "-s5.2": "001"},
}

_NUM = r"\d+(?:\.\d+)?"
_ITEM_KW = (
    r"(?P<pit>(?:pitfall\s*P?|P)(?P<pn>\d+[ab]?)\b)"
    r"|(?P<sec>(?:sections?|§|s)\s*(?P<sn>" + _NUM + r"))"
    r"|(?P<alg>(?:Algorithms?|Alg\.?)\s*(?P<an>\d+))"
    r"|(?P<eq>eq\.?\s*\(?(?P<en>\d+)\)?)"
    r"|(?P<lem>Lemma\s+(?P<ln>(?:[A-Z]\.?)?\d+(?:\.\d+)?))"
    r"|(?P<asm>Assumptions?\s+(?P<asn>" + _NUM + r"))"
    r"|(?P<tab>tables?\s+(?P<tn>" + _NUM + r"))"
    r"|(?P<app>Appendix\s+(?P<apn>[A-Z])\b)"
)
ITEM_FIRST = re.compile(r"(?:" + _ITEM_KW + r"|(?P<bare>(?<![\d.])\d{1,2}(?:\.\d+)?)(?![\d.]*\d))", re.I)
ITEM_NEXT = re.compile(r"(?:" + _ITEM_KW + r"|(?P<bare>\d{1,2}\.\d+))", re.I)
HEAD = re.compile(r"\bdigests?\b(?:'s)?\s*(?P<papers>\d{3}\b(?:\s*(?:,|and)\s*\d{3}\b)*)?(?:'s)?", re.I)
SEP = re.compile(r"\s*(?:,|;|/|\band\b|:)?\s*", re.I)
PATH = re.compile(r"papers/digests/(\d{3})_\w+\.md")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _suffix(m: re.Match) -> str:
    if m.group("pit"):
        return "-p" + m.group("pn").lower()
    if m.group("sec"):
        return "-s" + m.group("sn")
    if m.group("alg"):
        return "-alg" + m.group("an")
    if m.group("eq"):
        return "-eq" + m.group("en")
    if m.group("lem"):
        return "-lemma" + m.group("ln")
    if m.group("asm"):
        return "-assumption" + m.group("asn")
    if m.group("tab"):
        return "-table" + m.group("tn")
    if m.group("app"):
        return "-app" + m.group("apn").upper()
    return "-s" + m.group("bare")


def _normalise(text: str) -> str:
    text = re.sub(r"\n\s*#+", " ", text)
    return re.sub(r"\s+", " ", text)


def parse(text: str) -> list[tuple[str | None, str]]:
    """(paper or None, anchor suffix or "") for every digest reference in ``text``."""
    text = _normalise(text)
    refs: list[tuple[str | None, str]] = [(p, "") for p in PATH.findall(text)]
    for head in HEAD.finditer(text):
        if text[head.end():head.end() + 1] == "/":  # a path, handled above
            continue
        papers = re.findall(r"\d{3}", head.group("papers") or "") or [None]
        pos = head.end()
        pos = SEP.match(text, pos).end()
        items = []
        m = ITEM_FIRST.match(text, pos)
        while m:
            items.append(_suffix(m))
            pos = SEP.match(text, m.end()).end()
            m = ITEM_NEXT.match(text, pos)
        for paper in papers:
            if items:
                refs.extend((paper, s) for s in items)
            elif paper is not None:
                refs.append((paper, ""))
    return refs


def _sources() -> dict[str, str]:
    out = {}
    files = sorted((ROOT / "unlearnkit").rglob("*.py")) + sorted((ROOT / "docs").glob("*.md"))
    files.append(ROOT / "README.md")
    for f in files:
        if f != PAPERS_MD:
            out[f.relative_to(ROOT).as_posix()] = f.read_text(encoding="utf-8")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                           for c in cells if c["cell_type"] in ("markdown", "code"))
        out[nb.relative_to(ROOT).as_posix()] = text
    return out


def references() -> dict[str, set[str]]:
    """Anchor -> the files that cite it; unresolved papers give the anchor ``digest-???...``."""
    found: dict[str, set[str]] = {}
    for name, text in _sources().items():
        refs = parse(text)
        named = {p for p, _ in refs if p is not None}
        default = FILE_PAPER.get(name) or (named.pop() if len(named) == 1 else None)
        for paper, suffix in refs:
            if paper is None and isinstance(default, dict):
                paper = default.get(suffix)
            paper = paper or (default if isinstance(default, str) else None) or "???"
            found.setdefault(f"digest-{paper}{suffix}", set()).add(name)
    return found


def anchors() -> set[str]:
    return set(ANCHOR.findall(PAPERS_MD.read_text(encoding="utf-8")))


def test_parser_examples():
    assert parse("see digest 000, section 2.4 and") == [("000", "-s2.4")]
    assert parse("(digest 003 Algorithm 6)") == [("003", "-alg6")]
    assert parse("(digest\n    000, P7: the paper") == [("000", "-p7")]
    assert parse("digest 004's pitfall 1: the") == [("004", "-p1")]
    assert parse("digest 2.1, P2, P3):") == [(None, "-s2.1"), (None, "-p2"), (None, "-p3")]
    assert parse("digest 000, Algorithms 2 and 3") == [("000", "-alg2")]
    assert parse("digest 001 P10a)") == [("001", "-p10a")]
    assert parse("digests 000 and 004).") == [("000", ""), ("004", "")]
    assert parse("Digest: `papers/digests/001_dfl_newton.md`.") == [("001", "")]
    assert parse("hashlib.sha256(b).hexdigest() == x.digest()") == []
    assert parse("digest 4, scaled") == [(None, "-s4")]
    assert parse("(digest 003, Lemma A.11).") == [("003", "-lemmaA.11")]


def test_every_digest_reference_resolves():
    have = anchors()
    missing = {a: sorted(files) for a, files in references().items() if a not in have}
    assert not missing, "digest references without an anchor in docs/papers.md:\n" + "\n".join(
        f"  {a}: {', '.join(files)}" for a, files in sorted(missing.items()))


def test_papers_md_cites_all_five_papers_with_links():
    text = PAPERS_MD.read_text(encoding="utf-8")
    have = anchors()
    for paper in PAPERS:
        assert f"digest-{paper}" in have, paper
        heading = re.search(rf"^## digest {paper}: .+$", text, re.M)
        assert heading, f"no '## digest {paper}: ...' heading"
        section = text[heading.end():].split("\n## digest ", 1)[0]
        assert re.search(r"\]\(https?://[^)\s]+\)", section), f"paper {paper}: no link"
