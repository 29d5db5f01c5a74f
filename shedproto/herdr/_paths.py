"""Where herdr's sockets live: herdr's own resolution rules as pure functions.

Every function takes the environment as a mapping (and the platform, home and
temporary directory where they matter); nothing here reads ``os.environ`` or
touches the file system. Paths are returned as strings built the way Rust's
``PathBuf::join`` builds them, so that an empty ``XDG_CONFIG_HOME`` gives the
relative ``herdr`` exactly as herdr does.
"""

from __future__ import annotations

from collections.abc import Mapping

from shedproto._errors import ErrorCode, LocalProtocolError

__all__ = [
    "API_SOCKET_NAME",
    "CLIENT_SOCKET_NAME",
    "DEFAULT_SESSION_NAME",
    "MAX_SESSION_NAME_BYTES",
    "active_session_name",
    "api_socket_path",
    "app_dir_name",
    "client_socket_path",
    "config_dir",
    "data_dir",
    "derive_client_socket_path",
    "normalize_session_name",
    "validate_session_name",
]

API_SOCKET_NAME = "herdr.sock"
"""File name of the JSON API socket inside a session's data directory."""
CLIENT_SOCKET_NAME = "herdr-client.sock"
"""File name of the binary thin-client socket inside a session's data directory."""
DEFAULT_SESSION_NAME = "default"
"""The session name that means "the default session" (no ``sessions/`` directory)."""
MAX_SESSION_NAME_BYTES = 64
"""Longest session name herdr accepts, in bytes."""

SOCKET_PATH_ENV = "HERDR_SOCKET_PATH"
CLIENT_SOCKET_PATH_ENV = "HERDR_CLIENT_SOCKET_PATH"
SESSION_ENV = "HERDR_SESSION"


def _join(base: str, *parts: str) -> str:
    """``PathBuf::join`` for POSIX-style strings: an absolute part replaces the base."""
    path = base
    for part in parts:
        if part.startswith("/") or not path:
            path = part
        elif path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def app_dir_name(*, debug_build: bool = False) -> str:
    """Return herdr's directory name: ``herdr``, or ``herdr-dev`` for a debug build."""
    return "herdr-dev" if debug_build else "herdr"


def config_dir(
    env: Mapping[str, str],
    *,
    platform: str = "linux",
    temp_dir: str = "/tmp",
    debug_build: bool = False,
) -> str:
    r"""Return herdr's config directory, which is also the default session's data directory.

    ``$XDG_CONFIG_HOME/herdr`` when the variable is set at all (an empty value
    gives the relative path ``herdr``); otherwise ``$HOME/.config/herdr`` on
    every Unix including macOS; ``temp_dir/herdr`` without ``HOME``. On
    ``platform="win32"``: ``%APPDATA%\\herdr``, ``%USERPROFILE%\\AppData\\Roaming\\herdr``,
    ``$HOME/.config/herdr``, then ``temp_dir\\herdr``. Never raises.
    """
    name = app_dir_name(debug_build=debug_build)
    if "XDG_CONFIG_HOME" in env:
        return _join(env["XDG_CONFIG_HOME"], name)
    if platform == "win32":
        if "APPDATA" in env:
            return env["APPDATA"] + "\\" + name
        if "USERPROFILE" in env:
            return env["USERPROFILE"] + "\\AppData\\Roaming\\" + name
        if "HOME" in env:
            return _join(env["HOME"], f".config/{name}")
        return temp_dir + "\\" + name
    if "HOME" in env:
        return _join(env["HOME"], f".config/{name}")
    return _join(temp_dir, name)


def validate_session_name(name: str) -> None:
    """Check ``name`` against herdr's rules: 1-64 bytes of ``[A-Za-z0-9._-]``, not ``.``/``..``.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` with herdr's own message.

    """
    encoded = name.encode("utf-8", "surrogatepass")
    if not encoded:
        message = "session name cannot be empty"
    elif len(encoded) > MAX_SESSION_NAME_BYTES:
        message = f"session name cannot be longer than {MAX_SESSION_NAME_BYTES} bytes"
    elif name in (".", ".."):
        message = "session name cannot be . or .."
    elif not all(chr(b).isascii() and (chr(b).isalnum() or chr(b) in "._-") for b in encoded):
        message = "session name may only contain ASCII letters, numbers, '.', '_' and '-'"
    else:
        return
    raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, message)


def normalize_session_name(name: str) -> str | None:
    """Return ``None`` for ``default`` (the default session), else the validated name.

    Raises:
        LocalProtocolError: the name is invalid (see :func:`validate_session_name`).

    """
    if name == DEFAULT_SESSION_NAME:
        return None
    validate_session_name(name)
    return name


def active_session_name(env: Mapping[str, str]) -> str | None:
    """Return the session named by ``HERDR_SESSION``, as herdr's ``active_name()`` does.

    ``default`` and invalid names are ignored (``None``: the default session).
    """
    name = env.get(SESSION_ENV)
    if name is None or name == DEFAULT_SESSION_NAME:
        return None
    try:
        validate_session_name(name)
    except LocalProtocolError:
        return None
    return name


def data_dir(
    env: Mapping[str, str],
    session: str | None = None,
    *,
    platform: str = "linux",
    temp_dir: str = "/tmp",
    debug_build: bool = False,
) -> str:
    """Return the data directory of ``session`` (``None`` = the default session).

    A named session lives in ``config_dir/sessions/<name>``. The name is used
    as given; validate it first (:func:`normalize_session_name`).
    """
    base = config_dir(env, platform=platform, temp_dir=temp_dir, debug_build=debug_build)
    return base if session is None else _join(base, "sessions", session)


def api_socket_path(
    env: Mapping[str, str],
    *,
    session: str | None = None,
    platform: str = "linux",
    temp_dir: str = "/tmp",
    debug_build: bool = False,
) -> str:
    """Return the JSON API socket path, resolved as ``herdr`` resolves it.

    1. An explicit ``session`` (the CLI's ``--session``; ``"default"`` means
       the default session) wins over everything: ``data_dir(session)/herdr.sock``.
    2. Otherwise ``HERDR_SOCKET_PATH``, verbatim, even when empty.
    3. Otherwise ``HERDR_SESSION`` (ignored when invalid or ``default``).
    4. Otherwise ``config_dir/herdr.sock``.

    Raises:
        LocalProtocolError: the explicit ``session`` name is invalid.

    """
    if session is not None:
        name = normalize_session_name(session)
    elif SOCKET_PATH_ENV in env:
        return env[SOCKET_PATH_ENV]
    else:
        name = active_session_name(env)
    base = data_dir(env, name, platform=platform, temp_dir=temp_dir, debug_build=debug_build)
    return _join(base, API_SOCKET_NAME)


def _file_name(path: str) -> tuple[str, str | None]:
    """Split like Rust's ``Path::parent``/``file_name`` (trailing slashes ignored)."""
    if path and not path.strip("/"):
        return "", None  # the root has neither a parent nor a file name
    trimmed = path.rstrip("/")
    while trimmed.endswith("/.") and trimmed.strip("/."):
        trimmed = trimmed[:-2].rstrip("/")
    head, sep, tail = trimmed.rpartition("/")
    parent = head if head or not sep else "/"
    if tail in ("", ".", ".."):
        if tail == "..":
            return parent, None
        return (parent if sep else ""), None
    return (parent if sep else ""), tail


def derive_client_socket_path(api_socket: str) -> str:
    """Derive the thin-client socket from an API socket path: ``parent/<stem>-client.sock``.

    ``file_stem`` drops only the last extension (``/tmp/a.b.sock`` ->
    ``/tmp/a.b-client.sock``, ``/tmp/custom-api`` -> ``/tmp/custom-api-client.sock``,
    ``/tmp/.hidden`` keeps its leading dot); a path with no file name uses the
    stem ``herdr``. Never raises.
    """
    parent, name = _file_name(api_socket)
    if name is None:
        stem = "herdr"
    else:
        dot = name.rfind(".")
        stem = name if dot <= 0 else name[:dot]
    return _join(parent, f"{stem}-client.sock")


def client_socket_path(
    env: Mapping[str, str],
    *,
    session: str | None = None,
    platform: str = "linux",
    temp_dir: str = "/tmp",
    debug_build: bool = False,
) -> str:
    """Return the binary thin-client socket path, resolved as herdr resolves it.

    1. An explicit ``session``: ``data_dir(session)/herdr-client.sock``.
    2. ``HERDR_SOCKET_PATH`` set: derived from it (:func:`derive_client_socket_path`).
    3. ``HERDR_CLIENT_SOCKET_PATH`` (legacy; only when ``HERDR_SOCKET_PATH`` is unset).
    4. Otherwise the active session's ``herdr-client.sock``.

    Raises:
        LocalProtocolError: the explicit ``session`` name is invalid.

    """
    if session is not None:
        name = normalize_session_name(session)
    elif SOCKET_PATH_ENV in env:
        return derive_client_socket_path(env[SOCKET_PATH_ENV])
    elif CLIENT_SOCKET_PATH_ENV in env:
        return env[CLIENT_SOCKET_PATH_ENV]
    else:
        name = active_session_name(env)
    base = data_dir(env, name, platform=platform, temp_dir=temp_dir, debug_build=debug_build)
    return _join(base, CLIENT_SOCKET_NAME)
