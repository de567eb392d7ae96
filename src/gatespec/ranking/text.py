"""Tokenizer for tool retrieval: identifier splitting, stop words, CJK n-grams, stemming.

Deterministic (nothing depends on set/hash iteration order). The same
function is used for documents and queries so their terms line up.

* Identifiers are split on ``_ - . / :`` and every other non-alphanumeric character, and on
  case transitions: ``getHTTPResponse`` -> ``get http respons``, ``calculate_BMI`` ->
  ``calculat bmi``. Digits stay attached to the letters before them (``base64``, ``s3``).
* Terms are lowercased; a small English stop-word list is dropped.
* English words are stemmed with the Snowball English (Porter2) stemmer of the
  ``snowballstemmer`` package (which runs PyStemmer's C build of it when installed, as the
  project's dependencies do): "creates", "creating", "created" -> "creat", while words its
  exception lists keep apart stay apart ("news" is not "new", which a plain suffix stripper
  conflated: "news" then matched every tool that creates something new).
* Han, Kana and Hangul runs (no spaces between words) become character unigrams plus
  bigrams, so a Chinese query matches inside a Chinese description without a segmenter.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

__all__ = [
    "STOP_WORDS",
    "exact_name_keys",
    "index_stem",
    "name_key",
    "stem",
    "tokenize",
]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"

# ASCII text: one pass finds the sub-words of every identifier and word. Non-alphanumerics
# are never matched, so they separate tokens.
_ASCII_TOKEN_RE = re.compile(r"[a-z]+[0-9]*|[A-Z][a-z]+[0-9]*|[A-Z]+[0-9]*(?![a-z])|[0-9]+")
# Other text: CJK runs; non-ASCII punctuation and symbols; runs of word characters.
_CJK_RE = re.compile(rf"[{_CJK}]+")
_NON_ASCII_NON_WORD_RE = re.compile(r"[^\w\x00-\x7f]+")
_WORD_RE = re.compile(r"[^\W_]+")

# Deliberately small: function words that carry no tool-selecting signal. Verbs such as
# "get", "list", "find", "show", "search" are kept: they are parts of tool names.
STOP_WORDS: frozenset[str] = frozenset(
    """
    a an and are as at be been being but by can could did do does for from had has have
    he her his how i if in into is it its me my of on or our please she should so some
    than that the their them then there these they this those to us was we were what when
    where which who whom why will with would you your
    """.split()
)

_VOWELS = frozenset("aeiouy")


@functools.cache
def _snowball() -> Any:
    # Loaded on first use: the browse tree needs only `stem`, and a stdio serve that is
    # browsed by path never builds the ranking index these tables (~3 MiB resident) serve.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def index_stem(word: str) -> str:
    """The index term of a lowercase word: its Snowball English stem when the word is ASCII
    letters only ("issues" -> "issu", "news" -> "news"); other words are returned unchanged."""
    if not (word.isascii() and word.isalpha()):
        return word
    stemmed: str = _snowball().stemWord(word)
    return stemmed


def stem(word: str) -> str:
    """Very light suffix stripping for a lowercase word (plural -s/-es/-ies, -ing, -ed, -e),
    used by the browse tree to group tool-name words ("issue"/"issues"); ranking uses
    :func:`index_stem`.

    Not a linguistic stemmer: it only has to send inflected forms of one word to the same key
    on both the document and the query side ("creates", "creating", "created", "create" ->
    "creat"; "issues" -> "issu"; "queries" -> "query"). Words shorter than 4 characters and
    words that are not purely ASCII letters are returned unchanged.
    """
    w = word
    if len(w) < 4 or not (w.isascii() and w.isalpha()):
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith("ing") and len(w) >= 6 and _VOWELS.intersection(w[:-3]):
        w = w[:-3]
        if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]  # running -> runn -> run
    elif w.endswith("ed") and len(w) >= 5 and _VOWELS.intersection(w[:-2]):
        w = w[:-2]
        if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]  # mapped -> mapp -> map
    if len(w) >= 5 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]  # create -> creat, so it meets creating/created
    return w


class _TermMap(dict[str, str]):
    """Memo: raw sub-word (original case) -> index term, "" for a stop word."""

    _LIMIT = 100_000  # bounds memory if queries carry junk; misses are just recomputed

    def __init__(self, stemming: bool) -> None:
        super().__init__()
        self._stemming = stemming

    def __missing__(self, raw: str) -> str:
        low = raw.lower()
        term = "" if low in STOP_WORDS else (index_stem(low) if self._stemming else low)
        if len(self) < self._LIMIT:
            self[raw] = term
        return term


_TERMS = {True: _TermMap(True), False: _TermMap(False)}


def tokenize(text: str, *, stemming: bool = True) -> list[str]:
    """Split text or an identifier into index terms (order is not meaningful).

    >>> tokenize("getHTTPResponse list_issues read-text-file fs.read a/b")
    ['get', 'http', 'respons', 'list', 'issu', 'read', 'text', 'file', 'fs', 'read', 'b']
    >>> tokenize("必应搜索")
    ['必', '应', '搜', '索', '必应', '应搜', '搜索']
    """
    if not text:
        return []
    terms = _TERMS[stemming]
    if text.isascii():
        return [t for t in map(terms.__getitem__, _ASCII_TOKEN_RE.findall(text)) if t]
    # Full-width letters/digits and other compatibility forms -> plain equivalents.
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    # Term order is irrelevant to BM25, so take the CJK runs out first; what is left is
    # usually ASCII (after dropping non-ASCII punctuation/symbols) and takes the fast path.
    if _CJK_RE.search(text) is not None:
        for run in _CJK_RE.findall(text):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        text = _CJK_RE.sub(" ", text)
    text = _NON_ASCII_NON_WORD_RE.sub(" ", text)
    if text.isascii():
        out.extend(t for t in map(terms.__getitem__, _ASCII_TOKEN_RE.findall(text)) if t)
        return out
    for chunk in _WORD_RE.findall(text):
        if chunk.isascii():
            out.extend(t for t in map(terms.__getitem__, _ASCII_TOKEN_RE.findall(chunk)) if t)
        else:
            low = chunk.lower()  # accented/Cyrillic/...: no case split, no stemming
            if low not in STOP_WORDS:
                out.append(low)
    return out


_EDGE_PUNCT = "\"'`()[]{}<>,;!?*"


def name_key(name: str) -> str:
    """Whole-name term used for exact-name matching: "create_issue" -> "=create_issue"."""
    name = name.strip().lower()
    return "=" + name if name else ""


def exact_name_keys(query: str) -> list[str]:
    """Whole-name keys for the words of a query that could be a tool name.

    A word qualifies when it looks like an identifier (contains ``_ - . / :`` or an inner
    capital) or when it is the whole query. ``server/name`` and ``server:name`` also yield
    the bare ``name``. Lets "create_issue" or "github/create_issue" hit that tool exactly.
    """
    words = [w.strip(_EDGE_PUNCT).rstrip(".:") for w in query.split()]
    words = [w for w in words if w]
    keys: list[str] = []
    for word in words:
        if len(words) > 1 and not _looks_like_identifier(word):
            continue
        cands = [word]
        for sep in ("/", ":"):
            if sep in word:
                cands.append(word.rsplit(sep, 1)[1])
                break
        for cand in cands:
            key = name_key(cand)
            if key and key not in keys:
                keys.append(key)
    return keys


_IDENT_RE = re.compile(r"[_\-./:]|[a-z0-9][A-Z]")


def _looks_like_identifier(word: str) -> bool:
    return _IDENT_RE.search(word) is not None
