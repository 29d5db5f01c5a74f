"""Socket paths and test-mode switches, from explicit inputs (env mapping, uid, home).

Empty environment values count as unset, as in both apps.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._dialect import Dialect

__all__ = [
    "MOCK_UNREACHABLE_URL",
    "audit_log_path",
    "mac_socket_path",
    "mock_base_url_from_env",
    "mock_unreachable_hosts",
    "resolve_client_socket",
    "server_socket_path",
    "tauri_socket_path",
    "env_test_mode",
]


def _env(env: Mapping[str, str], key: str) -> str | None:
    value = env.get(key)
    return value if value else None


def mac_socket_path(home: str) -> str:
    """Return the mac app's socket: ``~/Library/Caches/ShedDesktop/shed-desktop.sock``."""
    return f"{home.rstrip('/')}/Library/Caches/ShedDesktop/shed-desktop.sock"


def audit_log_path(dialect: Dialect, env: Mapping[str, str]) -> str:
    """Return where ``dialect``'s app keeps its audit log (``activity.log_path``).

    mac: ``<state dir>/audit.jsonl``, the state dir ``$SHED_DESKTOP_STATE_DIR`` when
    absolute, else ``$HOME/Library/Application Support/ShedDesktop`` for an absolute
    ``$HOME``, else ``/tmp/ShedDesktop`` (``Sources/ShedKit/Backend/BundleProfile.swift:50-87``,
    ``Sources/ShedDesktopApp/AppModel.swift:1150@5a762e8``). Tauri (Linux): the app data
    dir, ``$XDG_DATA_HOME`` when absolute else ``$HOME/.local/share``, plus
    ``ai.stridelabs.shed-desktop/audit.jsonl``; with neither, ``./audit.jsonl``
    (``tauri/src-tauri/src/lib.rs:661-666``, ``tauri.conf.json:5@5a762e8``).
    """
    home = _env(env, "HOME")
    if dialect is Dialect.MAC:
        state = _env(env, "SHED_DESKTOP_STATE_DIR")
        if state is None or not state.startswith("/"):
            absolute = home is not None and home.startswith("/")
            state = f"{home}/Library/Application Support/ShedDesktop" if absolute else None
            state = state or "/tmp/ShedDesktop"
        return f"{state}/audit.jsonl"
    data = _env(env, "XDG_DATA_HOME")
    if data is None or not data.startswith("/"):
        data = f"{home}/.local/share" if home is not None else None
    if data is None:
        return "./audit.jsonl"
    return f"{data}/ai.stridelabs.shed-desktop/audit.jsonl"


def tauri_socket_path(env: Mapping[str, str], uid: int) -> str:
    """Return the Tauri app's socket path.

    ``$SHED_TAURI_SOCKET``, else ``$XDG_RUNTIME_DIR/shed-tauri.sock`` (flat),
    else ``/tmp/shed-tauri-<uid>/shed-tauri.sock``.
    """
    explicit = _env(env, "SHED_TAURI_SOCKET")
    if explicit is not None:
        return explicit
    runtime = _env(env, "XDG_RUNTIME_DIR")
    if runtime is not None:
        return f"{runtime.rstrip('/')}/shed-tauri.sock"
    return f"/tmp/shed-tauri-{uid}/shed-tauri.sock"


def server_socket_path(dialect: Dialect, env: Mapping[str, str], *, uid: int, home: str) -> str:
    """Return where ``dialect``'s server listens. The mac server has no override."""
    if dialect is Dialect.MAC:
        return mac_socket_path(home)
    return tauri_socket_path(env, uid)


def resolve_client_socket(
    env: Mapping[str, str],
    *,
    uid: int,
    home: str,
    platform: str,
    dialect: Dialect | None = None,
    explicit: str | None = None,
) -> str:
    """Return where a client connects: ``explicit`` > ``$SHED_DESKTOP_SOCKET`` > the dialect's path.

    With no dialect: ``$SHED_TAURI_SOCKET`` if set, else the mac default on
    ``darwin`` and the Tauri order elsewhere.
    """
    if explicit:
        return explicit
    override = _env(env, "SHED_DESKTOP_SOCKET")
    if override is not None:
        return override
    if dialect is None:
        if _env(env, "SHED_TAURI_SOCKET") is None and platform == "darwin":
            dialect = Dialect.MAC
        else:
            dialect = Dialect.TAURI
    return server_socket_path(dialect, env, uid=uid, home=home)


def env_test_mode(dialect: Dialect, env: Mapping[str, str]) -> bool:
    """Return whether ``env`` turns test mode on: the dialect's variable is exactly ``"1"``.

    mac reads ``SHED_DESKTOP_TEST_MODE``, Tauri ``SHED_TAURI_TEST_MODE``.
    """
    key = "SHED_DESKTOP_TEST_MODE" if dialect is Dialect.MAC else "SHED_TAURI_TEST_MODE"
    return env.get(key) == "1"


def mock_base_url_from_env(dialect: Dialect, env: Mapping[str, str]) -> str | None:
    """Return the mock server URL ``identify`` reports (``SHED_*_MOCK_BASE_URL``), or ``None``."""
    key = "SHED_DESKTOP_MOCK_BASE_URL" if dialect is Dialect.MAC else "SHED_TAURI_MOCK_BASE_URL"
    return _env(env, key)


MOCK_UNREACHABLE_URL = "http://127.0.0.1:1"
"""Where the Tauri app points a host named in ``SHED_TAURI_MOCK_UNREACHABLE_HOSTS``."""


def mock_unreachable_hosts(
    dialect: Dialect, env: Mapping[str, str], *, test_mode: bool
) -> frozenset[str]:
    """Return the server names ``SHED_*_MOCK_UNREACHABLE_HOSTS`` makes unreachable.

    The value is comma-separated; names are trimmed and empty entries dropped.
    Like every mock-only seam it is read **only in test mode**: outside it the
    answer is empty whatever the environment says. Never raises.
    """
    if not test_mode:
        return frozenset()
    key = (
        "SHED_DESKTOP_MOCK_UNREACHABLE_HOSTS"
        if dialect is Dialect.MAC
        else "SHED_TAURI_MOCK_UNREACHABLE_HOSTS"
    )
    return frozenset(name.strip() for name in env.get(key, "").split(",") if name.strip())
