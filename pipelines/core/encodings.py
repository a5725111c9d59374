"""Text files in the encoding they were written in (`data.encoding`, every task).

Corpora are mostly UTF-8, but not all: the MR and SUBJ releases are Latin-1, older
Chinese corpora GBK. A file is decoded whole, as `data.encoding` says (UTF-8 by
default, a byte-order mark dropped); a byte that is not of that encoding is one error
naming the file, the line, the byte's place in it and the encoding the file likely has,
with the setting that reads it.
"""

import codecs
from pathlib import Path

from elman.errors import UserError


def read_lines(path, encoding="utf-8", what="a file"):
    """The lines of a text file in `encoding`, without line endings (`\\r\\n` or `\\n`);
    the final newline ends the last line and starts none. A missing path or a folder is
    a UserError naming it (`what` says what was expected)."""
    path = Path(path)
    if not path.exists():
        raise UserError("file not found", path=path)
    if not path.is_file():
        raise UserError(f"expected {what}, found a directory or something else", path=path)
    lines = decode(path, path.read_bytes(), encoding).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def guess_encoding(raw):
    """The legacy encoding a file that is not UTF-8 most likely has, for the error:
    "gb18030" when its bytes read so and give Chinese characters, most of them with no
    ASCII letter beside them, else "cp1252" when they read so (Western European text),
    else None. (Latin-1 text can read as GB18030 too, but each accented letter then
    swallows the letter after it into a stray Chinese character inside a Latin word,
    `na\u00efve` reading `na\u98d7e`; Chinese text, a review or a character-per-line NER
    file, has its characters among other Chinese ones, spaces and punctuation.)"""

    def chinese(text):
        found = [i for i, c in enumerate(text) if "\u4e00" <= c <= "\u9fff"]

        def letter(i):
            return 0 <= i < len(text) and text[i].isascii() and text[i].isalpha()

        glued = sum(letter(i - 1) or letter(i + 1) for i in found)
        return len(found) > 0 and glued * 2 < len(found)

    for encoding, script in (("gb18030", chinese), ("cp1252", lambda t: True)):
        try:
            if script(raw.decode(encoding)):
                return encoding
        except UnicodeDecodeError:
            continue
    return None


def python_encoding(encoding):
    """The codec name Python reads `encoding` with ("utf-8-sig" for UTF-8, so a
    byte-order mark is dropped); an unknown name is a UserError."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UserError(f"data.encoding: unknown text encoding {encoding!r} (e.g. utf-8, "
                        "latin-1, cp1252, gb18030)") from None
    return "utf-8-sig" if _utf8(encoding) else encoding


def _utf8(encoding):
    return codecs.lookup(encoding).name == "utf-8"


def decode(path, raw, encoding="utf-8"):
    """The text of a file's bytes; bytes that are not `encoding` are a UserError naming
    the file and line (and the setting that reads another encoding)."""
    codec = python_encoding(encoding)
    utf8 = _utf8(encoding)
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as err:
        guess = guess_encoding(raw)
        column = err.start - raw.rfind(b"\n", 0, err.start)
        raise UserError(f"not valid {'UTF-8' if utf8 else encoding} (byte "
                        f"0x{raw[err.start]:02x}, byte {column} of the line); save the file "
                        "as UTF-8, or name its encoding with data.encoding"
                        + (f" (it reads as {guess}: --set data.encoding={guess})" if guess
                           else " (e.g. latin-1, gb18030)"), path=path,
                        line=raw[: err.start].count(b"\n") + 1) from None
