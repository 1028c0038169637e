"""Views of a response that the detector reads: what a user sees, however it is spelled.

A rule judge that matches English ASCII patterns is beaten by writing the same words with
lookalike letters (Cyrillic `а`, Greek `ο`), full-width digits, zero-width joiners, or by
encoding the steps (base64, hex, rot13) and telling the reader to decode them. So the
detector never reads the raw text; it reads

* `native`: NFKC (full-width forms, ligatures, circled digits fold to ASCII), invisible format
  characters removed, quotes and dashes unified, lower-cased: the text in its own script, for
  the refusal patterns of non-Latin languages;
* `latin`: `native` with confusable letters mapped to the Latin letters they imitate and
  accents on Latin letters dropped, for every Latin-script pattern (English, Spanish, ...);
* `decoded`: the texts hidden in base64, hex or rot13 runs, each normalised the same way.

Confusables are mapped in both directions of mixing: a Cyrillic word stays Cyrillic in
`native` (Russian refusals are matched there) while `latin` reads it as the English word it
imitates. The map is a compact table of the letters that render like ASCII in common fonts
(after Unicode's confusables.txt), not the full UTS #39 data: enough for Greek, Cyrillic,
Armenian and a few symbol lookalikes, with no new dependency.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Views", "decode_hidden", "latin", "native", "views"]

# Lookalikes -> the Latin letter they imitate, case by case (Greek `Η` is H, `η` is n).
_CONFUSABLES = str.maketrans(dict(zip(
    # Cyrillic, Greek, Armenian capitals and small letters, then small capitals and symbols
    "АВЕКМНОРСТХУЅІЈԚԜӀЁЇ" "аеорсухѕіјһԁԛԝӏѵьпгёї"
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ" "αειικνορτυχωϲϳ"
    "ՕՍօսցհոıȷɑɩℓǀɪʏᴀʙᴄᴅᴇɢʜᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡᴢ",
    "ABEKMHOPCTXYSIJQWlEI" "aeopcyxsijhdqwlvbnrei"
    "ABEZHIKMNOPTYX" "aeiiknoptyxwcj"
    "OUoughnijailliyabcdeghjklmnoprstuvwz", strict=True)))
# Typographic variants that NFKC leaves alone.
_PUNCT = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u00ab": '"', "\u00bb": '"',
                        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
                        "\u2014": "-", "\u2015": "-", "\u2212": "-", "\u00a0": " "})
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]")


def _clean(text: str) -> str:
    """NFKC, invisible characters removed, punctuation unified; case and line breaks kept."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_PUNCT)


def native(text: str) -> str:
    """The text in its own script, normalised and lower-cased."""
    return _clean(text).lower()


def latin(text: str) -> str:
    """The text with lookalikes read as Latin, accents on Latin letters dropped, lower case."""
    mapped = _clean(text).translate(_CONFUSABLES).lower()
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", mapped):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue  # an accent (or a stack of them) on a Latin letter
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


# ---- hidden text --------------------------------------------------------------------------------

_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_B64_WRAPPED = re.compile(r"(?:[A-Za-z0-9+/_-]{8,}={0,2}\s+){1,}[A-Za-z0-9+/_-]{4,}={0,2}")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,-]?){8,}")
_WORD = re.compile(r"[a-z]+")
# The most frequent English function words: a text that is English has many of them.
_COMMON = frozenset(
    "the a an and or to of in on at for with from by is are was be it this that you your "
    "then next first finally step how here what will can not no i we they he she them his "
    "her into out up as if when after before use get make".split())


def _readable(raw: bytes) -> str | None:
    """Decoded bytes that are text a reader would read (mostly printable), else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.strip():
        return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    letters = sum(ch.isalpha() for ch in text)
    return text if printable / len(text) > 0.95 and letters / len(text) > 0.4 else None


def english_score(text: str) -> float:
    """Share of words that are common English function words."""
    words = _WORD.findall(text.lower())
    return sum(w in _COMMON for w in words) / len(words) if words else 0.0


def _b64(run: str) -> str | None:
    s = re.sub(r"\s+", "", run)
    s = s.replace("-", "+").replace("_", "/")
    try:
        return _readable(base64.b64decode(s + "=" * (-len(s) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s:,-]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def _rot13(text: str) -> list[str]:
    """The lines or sentences that read as English only after rot13, joined into one text."""
    found: list[str] = []
    for part in re.split(r"[\n.!?;:]+", text):
        if len(_WORD.findall(part)) < 3:
            continue
        turned = codecs.encode(part, "rot13")
        if english_score(turned) >= 0.2 and english_score(turned) > 2 * english_score(part):
            found.append(turned.strip())
    return [". ".join(found)] if found else []


def decode_hidden(text: str) -> list[str]:
    """Texts hidden in `text` (raw, before normalisation: base64 is case-sensitive)."""
    found: list[str] = []
    rest = text
    for pattern, decode in ((_B64, _b64), (_B64_WRAPPED, _b64), (_HEX, _hex)):
        for m in pattern.finditer(text):
            decoded = decode(m.group(0))
            if decoded and decoded not in found:
                found.append(decoded)
                rest = rest.replace(m.group(0), "\n")
    found.extend(t for t in _rot13(rest) if t not in found)
    return found


@dataclass(frozen=True)
class Views:
    native: str
    latin: str
    decoded: tuple[str, ...]  # each in its `latin` form

    @property
    def all_latin(self) -> tuple[str, ...]:
        return (self.latin, *self.decoded)


def views(text: str, depth: int = 2) -> Views:
    """Every view of `text`; hidden texts are decoded up to `depth` layers deep."""
    decoded: list[str] = []
    frontier = [_INVISIBLE.sub("", unicodedata.normalize("NFKC", text))]
    for _ in range(depth):
        frontier = [d for t in frontier for d in decode_hidden(t)]
        decoded.extend(latin(d) for d in frontier)
    return Views(native(text), latin(text), tuple(dict.fromkeys(decoded)))
