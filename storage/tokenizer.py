"""Text → keyword tokens, the same way at index time and at query time.

Japanese goes through MeCab (fugashi + unidic-lite) and keeps content words in dictionary
form; Latin-script words are lower-cased, stripped of English stop words and Snowball-stemmed,
so English gets the treatment BM25 expects. Tokens are stored space-joined, letting FTS5's
plain unicode61 tokenizer read them back: the file stays readable by any SQLite.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import cache

import fugashi
import Stemmer

# unidic part-of-speech (pos1) values that carry meaning for retrieval.
CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞", "副詞"})
# Parts of speech that end a run of words forming one phrase (particles, punctuation...).
PHRASE_BREAK_POS = frozenset({"助詞", "助動詞", "補助記号", "記号", "空白", "接続詞"})
# Inflected words are indexed by dictionary form so 造られた finds 造る.
INFLECTED_POS = frozenset({"動詞", "形容詞"})

JAPANESE_STOP_WORDS = frozenset(
    "する ある いる なる れる られる できる こと もの よう ため ところ これ それ あれ "
    "どれ ここ そこ さん など いう 思う".split()
)
ENGLISH_STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve""".split()
)

_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
_HAS_WORD_CHAR = re.compile(r"\w")
_SINGLE_KANA = re.compile(r"^[\u3040-\u30ff]$")
MIN_TRIGRAM_PHRASE = 3

_local = threading.local()
_stemmer = Stemmer.Stemmer("english")
_stem_lock = threading.Lock()


def normalize(text: str) -> str:
    """NFKC + lower case: full-width Ａ１ and ａ1 become one token."""
    return unicodedata.normalize("NFKC", text).lower()


def _tagger() -> fugashi.Tagger:
    """One MeCab tagger per thread: taggers are not safe to share across threads."""
    tagger = getattr(_local, "tagger", None)
    if tagger is None:
        tagger = fugashi.Tagger()
        _local.tagger = tagger
    return tagger


@cache
def _stem(word: str) -> str:
    with _stem_lock:
        return str(_stemmer.stemWord(word))


@dataclass(frozen=True, slots=True)
class _Morpheme:
    surface: str
    pos: str
    base: str
    space_before: bool


def _morphemes(text: str) -> list[_Morpheme]:
    result = []
    for word in _tagger()(text):
        feature = word.feature
        pos = feature.pos1 or ""
        base = getattr(feature, "orthBase", None)
        result.append(
            _Morpheme(
                word.surface, pos, base if isinstance(base, str) else "", bool(word.white_space)
            )
        )
    return result


def _keyword(morpheme: _Morpheme) -> str | None:
    surface = morpheme.surface
    if _ASCII_WORD.match(surface):
        if surface in ENGLISH_STOP_WORDS:
            return None
        return surface if surface.isdigit() else _stem(surface)
    if morpheme.pos not in CONTENT_POS or not _HAS_WORD_CHAR.search(surface):
        return None
    token = morpheme.base if morpheme.pos in INFLECTED_POS and morpheme.base else surface
    if token in JAPANESE_STOP_WORDS or _SINGLE_KANA.match(token):
        return None
    return normalize(token)


def tokenize(text: str) -> list[str]:
    """Keyword tokens of `text`, in order (repeats kept: BM25 counts them)."""
    tokens = []
    for morpheme in _morphemes(normalize(text)):
        token = _keyword(morpheme)
        if token:
            tokens.append(token)
    return tokens


def phrases(text: str) -> list[str]:
    """Runs of adjacent words with no particle or punctuation between them, joined.

    MeCab may cut a name one way in the question and another way in the page (りゅう|おう
    against りゅうおう); the joined run still matches the page's characters in the trigram
    index. Runs shorter than three characters cannot be looked up by trigrams.
    """
    found: list[str] = []
    run: list[str] = []

    def close_run() -> None:
        phrase = "".join(run).strip()
        if len(phrase) >= MIN_TRIGRAM_PHRASE and not _ASCII_WORD.match(phrase):
            found.append(phrase)
        run.clear()

    for morpheme in _morphemes(normalize(text)):
        if morpheme.space_before:
            close_run()
        if morpheme.pos in PHRASE_BREAK_POS:
            close_run()
        else:
            run.append(morpheme.surface)
    close_run()
    return list(dict.fromkeys(found))
