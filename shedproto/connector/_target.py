r"""Target identity and where its durable state and locks live.

A target is (API URL origin, space DID, owner DID). Its key is the lowercase
hex SHA-256 of ``origin_href + "\n" + spaceDid + "\n" + ownerDid``; the
ledger is ``<stateDir>/target-<key>.command-ledger.json``, the target lock
``<lockDir>/target-<key>.lock`` and the ledger lock ``<ledger>.lock``.

Everything here is pure: the environment is a mapping, the platform is a
``sys.platform`` value, the uid and the working directory (for resolving
relative paths, as Node's ``path.resolve`` does) are arguments.
"""

from __future__ import annotations

import hashlib
import ntpath
import posixpath
from collections.abc import Mapping

from ._errors import TargetError
from ._text import js_trim
from ._url import InvalidUrlError, origin_href

__all__ = [
    "TargetIdentity",
    "ledger_lock_path",
    "ledger_path",
    "lock_directory",
    "parse_api_url",
    "state_directory",
    "target_key",
    "target_lock_path",
]


class TargetIdentity:
    """One target: the API origin, the resolved space DID and the owner DID, and its key.

    Raises (on construction):
        TargetError: ``api_url`` is not a valid URL
            (``Common Fabric API URL is not valid``; the URL is never echoed).
    """

    __slots__ = ("key", "origin", "owner_did", "space_did")

    def __init__(self, api_url: str, space_did: str, owner_did: str) -> None:
        self.origin = parse_api_url(api_url)
        self.space_did = space_did
        self.owner_did = owner_did
        identity = f"{self.origin}\n{space_did}\n{owner_did}"
        self.key = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()

    def __repr__(self) -> str:
        return f"TargetIdentity(origin={self.origin!r}, key={self.key!r})"


def parse_api_url(api_url: str, error_message: str = "Common Fabric API URL is not valid") -> str:
    """Return the credential-free origin href of ``api_url`` (``https://fabric.example.test/``).

    Raises:
        TargetError: ``error_message`` (the URL itself is never echoed, so
            credentials in it cannot leak into logs).

    """
    try:
        return origin_href(api_url)
    except InvalidUrlError:
        raise TargetError(error_message) from None


def target_key(api_url: str, space_did: str, owner_did: str) -> str:
    """Return the 64-hex-digit target key for the three parts.

    Raises:
        TargetError: ``api_url`` is not a valid URL.

    """
    return TargetIdentity(api_url, space_did, owner_did).key


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    if value is None:
        return None
    value = js_trim(value)
    return value or None


def _resolve(path: str, cwd: str, windows: bool) -> str:
    if windows:
        return ntpath.normpath(ntpath.join(cwd, path))
    return posixpath.normpath(posixpath.join(cwd, path))


def state_directory(env: Mapping[str, str], *, platform: str, cwd: str = "/") -> str:
    r"""Return the durable state directory (first match).

    1. ``$XDG_STATE_HOME/commonfabric/agents-host`` (trimmed, resolved against ``cwd``);
    2. Windows: ``%LOCALAPPDATA%\CommonFabric\agents-host``;
    3. macOS: ``$HOME/Library/Application Support/CommonFabric/agents-host``;
    4. otherwise ``$HOME/.local/state/commonfabric/agents-host``.

    Raises:
        TargetError: ``LOCALAPPDATA is required to locate durable agent host
            state`` or ``HOME is required to locate durable agent host state``.

    """
    windows = platform == "win32"
    join = ntpath.join if windows else posixpath.join
    xdg = _env(env, "XDG_STATE_HOME")
    if xdg is not None:
        return join(_resolve(xdg, cwd, windows), "commonfabric", "agents-host")
    if windows:
        local = _env(env, "LOCALAPPDATA")
        if local is None:
            raise TargetError("LOCALAPPDATA is required to locate durable agent host state")
        return ntpath.join(_resolve(local, cwd, True), "CommonFabric", "agents-host")
    home = _env(env, "HOME")
    if home is None:
        raise TargetError("HOME is required to locate durable agent host state")
    if platform == "darwin":
        base = _resolve(home, cwd, False)
        return posixpath.join(base, "Library", "Application Support", "CommonFabric", "agents-host")
    base = _resolve(home, cwd, False)
    return posixpath.join(base, ".local", "state", "commonfabric", "agents-host")


def lock_directory(
    env: Mapping[str, str], *, platform: str, uid: int | None, cwd: str = "/"
) -> str:
    r"""Return the process-lock directory (first match).

    1. ``$CF_AGENTS_HOST_LOCK_DIR`` (trimmed, resolved against ``cwd``);
    2. ``$XDG_RUNTIME_DIR/commonfabric/agents-host``;
    3. Windows: ``%LOCALAPPDATA%``, ``%TEMP%`` or ``%TMP%`` + ``\CommonFabric\agents-host``;
    4. ``${TMPDIR:-/tmp}/commonfabric-agents-host-<uid>``.

    Raises:
        TargetError: on Windows with none of those set
            (``CF_AGENTS_HOST_LOCK_DIR is required when no Windows runtime
            directory is available``), or on another platform without a uid.

    """
    windows = platform == "win32"
    join = ntpath.join if windows else posixpath.join
    explicit = _env(env, "CF_AGENTS_HOST_LOCK_DIR")
    if explicit is not None:
        return _resolve(explicit, cwd, windows)
    runtime = _env(env, "XDG_RUNTIME_DIR")
    if runtime is not None:
        return join(_resolve(runtime, cwd, windows), "commonfabric", "agents-host")
    if windows:
        # ``LOCALAPPDATA ?? TEMP ?? TMP``: the first one *set* is used, even if blank.
        base = next((env[name] for name in ("LOCALAPPDATA", "TEMP", "TMP") if name in env), "")
        if js_trim(base):
            return ntpath.join(_resolve(js_trim(base), cwd, True), "CommonFabric", "agents-host")
        raise TargetError(
            "CF_AGENTS_HOST_LOCK_DIR is required when no Windows runtime directory is available"
        )
    if uid is None:
        raise TargetError("a uid is required to locate the agent host lock directory")
    temp = _env(env, "TMPDIR") or "/tmp"
    return posixpath.join(_resolve(temp, cwd, False), f"commonfabric-agents-host-{uid}")


def ledger_path(state_dir: str, key: str, *, platform: str = "linux") -> str:
    """Return ``<stateDir>/target-<key>.command-ledger.json``, joined for ``platform``."""
    join = ntpath.join if platform == "win32" else posixpath.join
    return join(state_dir, f"target-{key}.command-ledger.json")


def target_lock_path(lock_dir: str, key: str, *, platform: str = "linux") -> str:
    """Return ``<lockDir>/target-<key>.lock``, joined for ``platform``."""
    join = ntpath.join if platform == "win32" else posixpath.join
    return join(lock_dir, f"target-{key}.lock")


def ledger_lock_path(ledger: str) -> str:
    """Return ``<ledger>.lock``: the lock that keeps two hosts off one ledger file."""
    return f"{ledger}.lock"
