r"""The WHATWG URL rules the target identity depends on, for what agents-host needs.

``new URL(apiUrl)`` then clearing credentials, query and fragment and setting
the path to ``/`` gives the *origin href* that names a target. This module
parses enough of the WHATWG URL standard to produce exactly that string:

* leading/trailing C0-control-or-space stripped, tab and newline removed;
* the scheme lowercased; special schemes (``http``, ``https``, ``ws``, ``wss``,
  ``ftp``, ``file``) accept ``\`` as ``/`` and any number of slashes;
* userinfo (up to the last ``@``) dropped;
* the port parsed (digits only, at most 65535) and dropped when it is the
  scheme's default;
* hosts: IPv6 literals parsed and printed in canonical compressed form; for
  special schemes the host is percent-decoded, lowercased (non-ASCII labels
  through IDNA), checked for forbidden code points, and an all-numeric last
  label parsed as IPv4 (decimal, ``0x`` hex and ``0`` octal parts, as the
  standard does); other schemes keep an opaque, case-preserved host.

Not covered (documented in the package): full UTS 46 mapping (Python's
IDNA 2003 codec is used for non-ASCII hosts) and relative references.
"""

from __future__ import annotations

import re

__all__ = ["InvalidUrlError", "SPECIAL_SCHEMES", "origin_href"]

SPECIAL_SCHEMES: dict[str, int | None] = {
    "ftp": 21,
    "file": None,
    "http": 80,
    "https": 443,
    "ws": 80,
    "wss": 443,
}
"""Special schemes and their default ports."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN = _FORBIDDEN_HOST | frozenset("%\x7f") | frozenset(chr(c) for c in range(0x20))
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))


class InvalidUrlError(ValueError):
    """The text is not a URL the WHATWG parser accepts (JavaScript's ``TypeError: Invalid URL``)."""


def _percent_decode(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    out = bytearray()
    i = 0
    while i < len(raw):
        b = raw[i]
        if b == 0x25 and i + 2 < len(raw) + 0 and re.match(rb"[0-9A-Fa-f]{2}", raw[i + 1 : i + 3]):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(b)
            i += 1
    return bytes(out)


def _parse_ipv4_number(part: str) -> int | None:
    if not part:
        return None
    radix = 10
    if len(part) >= 2 and part[:2] in ("0x", "0X"):
        radix, part = 16, part[2:]
    elif len(part) >= 2 and part[0] == "0":
        radix, part = 8, part[1:]
    if part == "":
        return 0
    digits = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[radix]
    if any(c not in digits for c in part):
        return None
    return int(part, radix)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    if last and all(c in "0123456789" for c in last):
        return True
    return _parse_ipv4_number(last) is not None and last[:2] in ("0x", "0X")


def _parse_ipv4(host: str) -> str:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        raise InvalidUrlError("Invalid URL")
    numbers = []
    for part in parts:
        number = _parse_ipv4_number(part)
        if number is None:
            raise InvalidUrlError("Invalid URL")
        numbers.append(number)
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise InvalidUrlError("Invalid URL")
    address = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        address += number * 256 ** (3 - index)
    return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def _parse_ipv6(text: str) -> str:  # noqa: PLR0915 - the standard's state machine
    pieces = [0] * 8
    piece_index = 0
    compress: int | None = None
    i = 0
    n = len(text)
    if text.startswith(":"):
        if not text.startswith("::"):
            raise InvalidUrlError("Invalid URL")
        i = 2
        piece_index = 1
        compress = 1
    while i < n:
        if piece_index == 8:
            raise InvalidUrlError("Invalid URL")
        if text[i] == ":":
            if compress is not None:
                raise InvalidUrlError("Invalid URL")
            i += 1
            piece_index += 1
            compress = piece_index
            continue
        value = length = 0
        while length < 4 and i < n and text[i] in "0123456789abcdefABCDEF":
            value = value * 16 + int(text[i], 16)
            i += 1
            length += 1
        if i < n and text[i] == ".":
            if length == 0 or piece_index > 6:
                raise InvalidUrlError("Invalid URL")
            i -= length
            numbers_seen = 0
            while i < n:
                ipv4_piece: int | None = None
                if numbers_seen > 0:
                    if text[i] == "." and numbers_seen < 4:
                        i += 1
                    else:
                        raise InvalidUrlError("Invalid URL")
                if i >= n or not text[i].isdigit() or not text[i].isascii():
                    raise InvalidUrlError("Invalid URL")
                while i < n and text[i].isascii() and text[i].isdigit():
                    number = int(text[i])
                    if ipv4_piece is None:
                        ipv4_piece = number
                    elif ipv4_piece == 0:
                        raise InvalidUrlError("Invalid URL")
                    else:
                        ipv4_piece = ipv4_piece * 10 + number
                    if ipv4_piece > 255:
                        raise InvalidUrlError("Invalid URL")
                    i += 1
                assert ipv4_piece is not None
                pieces[piece_index] = pieces[piece_index] * 0x100 + ipv4_piece
                numbers_seen += 1
                if numbers_seen in (2, 4):
                    piece_index += 1
            if numbers_seen != 4:
                raise InvalidUrlError("Invalid URL")
            break
        if i < n and text[i] == ":":
            i += 1
            if i >= n:
                raise InvalidUrlError("Invalid URL")
        elif i < n:
            raise InvalidUrlError("Invalid URL")
        pieces[piece_index] = value
        piece_index += 1
    if compress is not None:
        swaps = piece_index - compress
        piece_index = 7
        while piece_index != 0 and swaps > 0:
            pieces[piece_index], pieces[compress + swaps - 1] = (
                pieces[compress + swaps - 1],
                pieces[piece_index],
            )
            piece_index -= 1
            swaps -= 1
    elif piece_index != 8:
        raise InvalidUrlError("Invalid URL")
    # serialise: compress the first longest run of two or more zero pieces
    best_start, best_len, run_start, run_len = -1, 1, -1, 0
    for index, piece in enumerate([*pieces, 1]):
        if piece == 0 and index < 8:
            if run_start < 0:
                run_start, run_len = index, 0
            run_len += 1
        else:
            if run_len > best_len:
                best_start, best_len = run_start, run_len
            run_start, run_len = -1, 0
    out = ""
    ignore0 = False
    for index, piece in enumerate(pieces):
        if ignore0 and piece == 0:
            continue
        ignore0 = False
        if index == best_start:
            out += "::" if index == 0 else ":"
            ignore0 = True
            continue
        out += f"{piece:x}"
        if index != 7:
            out += ":"
    return f"[{out}]"


def _domain_to_ascii(domain: str) -> str:
    if domain.isascii():
        return domain.lower()
    try:
        labels = [
            label.encode("idna").decode("ascii") if label else label for label in domain.split(".")
        ]
    except UnicodeError:
        raise InvalidUrlError("Invalid URL") from None
    return ".".join(labels).lower()


def _parse_host(text: str, special: bool) -> str:
    if text.startswith("["):
        if not text.endswith("]"):
            raise InvalidUrlError("Invalid URL")
        return _parse_ipv6(text[1:-1])
    if not special:
        if any(c in _FORBIDDEN_HOST for c in text):
            raise InvalidUrlError("Invalid URL")
        out: list[str] = []
        for char in text:
            if ord(char) < 0x20 or ord(char) >= 0x7F:
                out.extend(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))
            else:
                out.append(char)
        return "".join(out)
    try:
        domain = _percent_decode(text).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidUrlError("Invalid URL") from None
    ascii_domain = _domain_to_ascii(domain)
    if not ascii_domain or any(c in _FORBIDDEN_DOMAIN for c in ascii_domain):
        raise InvalidUrlError("Invalid URL")
    if _ends_in_number(ascii_domain):
        return _parse_ipv4(ascii_domain)
    return ascii_domain


def origin_href(url: str) -> str:  # noqa: PLR0915
    """Return ``url``'s href after clearing username, password, query and fragment and path = ``/``.

    ``https://user:secret@FABRIC.example.test:443/x?y`` gives
    ``https://fabric.example.test/``. For a URL without an authority (an
    opaque path such as ``mailto:x``) the path cannot be set, so the result is
    ``scheme:path`` without query or fragment, as in JavaScript.

    Raises:
        InvalidUrlError: the WHATWG parser rejects ``url``.

    """
    text = url.strip(_C0_OR_SPACE)
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    colon = text.find(":")
    if colon <= 0 or not _SCHEME.match(text[:colon]):
        raise InvalidUrlError("Invalid URL")
    scheme = text[:colon].lower()
    rest = text[colon + 1 :]
    special = scheme in SPECIAL_SCHEMES
    if special:
        rest = rest.replace("\\", "/")
        if scheme == "file":
            return _file_origin(rest)
        authority_start = len(rest) - len(rest.lstrip("/"))
        rest = rest[authority_start:]
    elif rest.startswith("//"):
        rest = rest[2:]
    else:
        opaque = re.split(r"[?#]", rest, maxsplit=1)[0]
        if rest.startswith("/"):
            return f"{scheme}:/"
        return f"{scheme}:{opaque}"
    end = len(rest)
    for delimiter in "/?#":
        index = rest.find(delimiter)
        if index >= 0:
            end = min(end, index)
    authority = rest[:end]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
        if not authority:
            raise InvalidUrlError("Invalid URL")
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            raise InvalidUrlError("Invalid URL")
        host_text, port_text = authority[: close + 1], authority[close + 1 :]
        if port_text and not port_text.startswith(":"):
            raise InvalidUrlError("Invalid URL")
        port_text = port_text[1:]
        has_port = bool(authority[close + 1 :])
    else:
        host_text, has_port_sep, port_text = authority.partition(":")
        has_port = bool(has_port_sep)
    if not host_text:
        if special or has_port or at >= 0:
            raise InvalidUrlError("Invalid URL")
        return f"{scheme}:///"
    host = _parse_host(host_text, special)
    port = ""
    if has_port and port_text:
        if not port_text.isascii() or not port_text.isdigit():
            raise InvalidUrlError("Invalid URL")
        number = int(port_text)
        if number > 65535:
            raise InvalidUrlError("Invalid URL")
        if number != SPECIAL_SCHEMES.get(scheme, -1):
            port = f":{number}"
    elif has_port and not port_text:
        pass
    return f"{scheme}://{host}{port}/"


def _file_origin(rest: str) -> str:
    if rest.startswith("//"):
        authority = rest[2:]
        end = len(authority)
        for delimiter in "/?#":
            index = authority.find(delimiter)
            if index >= 0:
                end = min(end, index)
        host_text = authority[:end]
        if host_text and not re.fullmatch(r"[A-Za-z][:|]", host_text):
            host = _parse_host(host_text, special=True)
            return "file:///" if host == "localhost" else f"file://{host}/"
    return "file:///"
