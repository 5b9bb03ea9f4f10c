"""How a SQL file's bytes become its text: the one reader of SQL files for harvest, parse and check.

The encoding is the first of:

1. a byte-order mark: UTF-8, UTF-16 LE or UTF-16 BE (SQL Server Management Studio saves UTF-16
   with a mark by default); the mark is not part of the text;
2. a ``-- encoding: NAME`` line among the file's leading comments, as ``-- dialect: NAME``;
3. ``--encoding NAME``;
4. UTF-8.

A file that is not valid in its encoding is not dropped: each byte that does not decode is read as
cp1252 (Windows-1252, what a stray ``é`` in a comment nearly always is), the five bytes cp1252 leaves
undefined as their Latin-1 characters, so every byte becomes a character and nothing is lost; the
rest of the file decodes as it is.  A warning names the line and column of the first such byte.

Line ends are read as a text-mode ``open`` reads them: ``\\r\\n`` and ``\\r`` become ``\\n``.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import NamedTuple

from lineage_cli.model import Issue

DEFAULT_ENCODING = "utf-8"
FALLBACK_ENCODING = "cp1252"
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_ENCODING_LINE = re.compile(rb"--\s*encoding\s*:\s*([A-Za-z0-9_.:-]+)")
# Latin-1 maps every byte to the character of its number; cp1252 differs from it in 0x80-0x9f only,
# where it leaves 0x81, 0x8d, 0x8f, 0x90 and 0x9d undefined: those keep their Latin-1 character.
_CP1252_OVER_LATIN1 = {b: bytes([b]).decode(FALLBACK_ENCODING, "ignore") or chr(b) for b in range(0x80, 0xA0)}
_FALLBACK_ERRORS = "lineage-cp1252"


def _as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler of the fallback: the bytes that did not decode, one character each."""
    if not isinstance(error, UnicodeDecodeError):  # registered for decoding only
        raise error
    return error.object[error.start : error.end].decode("latin-1").translate(_CP1252_OVER_LATIN1), error.end


codecs.register_error(_FALLBACK_ERRORS, _as_cp1252)


class SqlText(NamedTuple):
    text: str
    warnings: tuple[Issue, ...] = ()  # an unknown encoding named, bytes that did not decode


def known_encoding(name: str) -> bool:
    """Whether ``name`` is a text encoding Python can decode (``rot13`` and ``base64`` are codecs, not these)."""
    try:
        b"\0\0\0\0".decode(name)  # not b"": that decodes without looking the name up
    except LookupError:
        return False
    return True


def read_sql_file(path: str | os.PathLike[str], display: str, encoding: str | None = None) -> SqlText:
    """The text of the SQL file at ``path`` (named ``display`` in warnings); ``OSError`` if it cannot be read."""
    with open(path, "rb") as file:
        return decode_sql(file.read(), display, encoding)


def decode_sql(data: bytes, display: str, encoding: str | None = None) -> SqlText:
    """``data`` as text by the rules above: ``encoding`` is ``--encoding``'s NAME, if any."""
    warnings: list[Issue] = []
    name, body = _encoding(data, display, encoding, warnings)
    try:
        text = body.decode(name)
    except UnicodeDecodeError as error:
        warnings.append(_undecodable(body, name, error.start, display))
        text = body.decode(name, _FALLBACK_ERRORS)
    return SqlText(_text_mode_newlines(text), tuple(warnings))


def _encoding(data: bytes, display: str, encoding: str | None, warnings: list[Issue]) -> tuple[str, bytes]:
    """The encoding of ``data`` and the bytes to decode with it (without a byte-order mark)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, data[len(bom) :]
    declared = _declared(data)
    if declared is not None:
        name, line = declared
        if known_encoding(name):
            return name, data
        fallback = encoding or DEFAULT_ENCODING
        warnings.append(Issue(display, line, f"unknown encoding {name!r}: read as {fallback}", level="warning"))
    return encoding or DEFAULT_ENCODING, data


def _declared(data: bytes) -> tuple[str, int] | None:
    """The NAME of a ``-- encoding: NAME`` line among the leading blank and ``--`` lines, with its line number.

    Looked for in the bytes, before any decoding: the line is ASCII in every encoding it can name.
    """
    start, number = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end].strip()
        if line and not line.startswith(b"--"):
            return None
        if (match := _ENCODING_LINE.fullmatch(line)) is not None:
            return match.group(1).decode("ascii"), number
        start, number = end + 1, number + 1
    return None


def _undecodable(body: bytes, name: str, at: int, display: str) -> Issue:
    """The warning for the first byte of ``body`` (at offset ``at``) that ``name`` cannot decode, at its line and
    column: the text before it decodes, by definition, so its lines and characters are counted there."""
    before = _text_mode_newlines(body[:at].decode(name, "replace"))
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    message = (
        f"byte 0x{body[at]:02x} is not valid {name}: such bytes are read as {FALLBACK_ENCODING}"
        " (name the file's encoding with --encoding or a `-- encoding: NAME` line)"
    )
    return Issue(display, line, message, col=col, level="warning")


def _text_mode_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
