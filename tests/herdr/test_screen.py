"""The pyte-backed pane screen, fed bytes directly (no PTY)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto.herdr._screen import ReadOutcome
from shedproto.servers.herdr._screen import MAX_SCROLLBACK, PaneScreen
from tests._hypothesis import examples

SOURCES = ("visible", "recent", "recent_unwrapped", "detection")


def screen(data: bytes, *, cols: int = 20, rows: int = 5) -> PaneScreen:
    pane = PaneScreen(cols=cols, rows=rows)
    pane.feed(data)
    return pane


def text(pane: PaneScreen, source: str = "visible", **kwargs: object) -> str:
    return pane.read(source, **kwargs).text  # type: ignore[arg-type]


def test_cursor_addressing_draws_where_the_program_says() -> None:
    pane = screen(b"junk\r\nmore junk\x1b[2J\x1b[1;1Htop\x1b[3;5Hmid\x1b[5;1Hbottom")
    assert text(pane) == "top\n\n    mid\n\nbottom\n"
    # a full-screen redraw overwrites in place: no history of the old frame on screen
    pane.feed(b"\x1b[H\x1b[2Jframe 2\x1b[3;5H\x1b[K")
    assert text(pane) == "frame 2\n"


def test_trailing_spaces_and_blank_rows_are_trimmed_and_empty_is_empty() -> None:
    assert text(screen(b"")) == ""
    assert screen(b"").read("recent") == ReadOutcome("", False)
    pane = screen(b"a   \r\n   \r\n b  \r\n\r\n")
    assert text(pane) == "a\n\n b\n"
    # a styled blank cell is still a blank row in text
    assert text(screen(b"\x1b[41m   \x1b[0m")) == ""


def test_visible_lines_keep_the_last_lines_and_report_truncation() -> None:
    pane = screen(b"1\r\n2\r\n3\r\n4")
    assert pane.read("visible", lines=2) == ReadOutcome("3\n4\n", True)
    assert pane.read("visible", lines=4) == ReadOutcome("1\n2\n3\n4\n", False)
    assert pane.read("visible", lines=0) == ReadOutcome("", True)


def test_scrollback_recent_and_truncation() -> None:
    pane = screen(b"".join(b"line %d\r\n" % n for n in range(12)), rows=4)
    assert text(pane) == "line 9\nline 10\nline 11\n"
    recent = pane.read("recent")
    assert recent.text == "".join(f"line {n}\n" for n in range(12))
    assert not recent.truncated  # 13 rows held (9 scrolled off + 4 on screen) <= 80
    # the window ends at the cursor row (blank), so 3 rows are 2 lines of text
    assert pane.read("recent", lines=3) == ReadOutcome("line 10\nline 11\n", True)
    assert pane.read("recent", lines=5000).truncated is False


def test_soft_wraps_are_rows_in_recent_and_one_line_in_recent_unwrapped() -> None:
    pane = screen(b"0123456789abcdefghij-KLMNOP\r\nshort\r\n", cols=10)
    assert text(pane, "recent") == "0123456789\nabcdefghij\n-KLMNOP\nshort\n"
    assert text(pane, "recent_unwrapped") == "0123456789abcdefghij-KLMNOP\nshort\n"
    # a hard line break at exactly the width is not a soft wrap
    exact = screen(b"0123456789\r\nnext\r\n", cols=10)
    assert text(exact, "recent_unwrapped") == "0123456789\nnext\n"
    # erasing a wrapped row's end (a program redrawing it) unwraps it
    pane.feed(b"\x1b[1;1H\x1b[Kfresh")
    assert text(pane, "recent_unwrapped").startswith("fresh\nabcdefghij-KLMNOP\n")


def test_alternate_screen_is_separate_and_restored() -> None:
    pane = screen(b"$ ls\r\nfile\r\n$ vim", rows=4)
    pane.feed(b"\x1b[?1049h\x1b[H\x1b[2J\x1b[2;3HEDITOR\x1b[4;1H-- INSERT --")
    assert pane.alternate
    assert text(pane) == "\n  EDITOR\n\n-- INSERT --\n"
    # recent on the alternate screen is that screen only, no shell history
    assert text(pane, "recent") == "\n  EDITOR\n\n-- INSERT --\n"
    assert text(pane, "recent", lines=2) == "\n-- INSERT --\n"
    pane.feed(b"\x1b[?1049l")
    assert bool(pane.alternate) is False
    assert text(pane) == "$ ls\nfile\n$ vim\n"
    assert pane.cursor == (5, 2)  # 1049 restores the cursor
    # 47 switches too (without the cursor save)
    pane.feed(b"\x1b[?47hALT\x1b[?47l")
    assert text(pane) == "$ ls\nfile\n$ vim\n"


def test_output_on_the_alternate_screen_never_reaches_scrollback() -> None:
    pane = screen(b"shell\r\n", rows=3)
    pane.feed(b"\x1b[?1049h" + b"".join(b"tui %d\r\n" % n for n in range(10)) + b"\x1b[?1049l")
    assert "tui" not in text(pane, "recent")


def test_erase_scrollback_and_full_reset() -> None:
    pane = screen(b"".join(b"old %d\r\n" % n for n in range(10)), rows=3)
    pane.feed(b"\x1b[3J")  # clear's scrollback erase: the screen stays
    assert text(pane, "recent") == "old 8\nold 9\n"
    pane.feed(b"\x1bc")
    assert text(pane, "recent") == ""


def test_resize_pushes_rows_into_scrollback_and_pulls_them_back() -> None:
    pane = screen(b"a\r\nb\r\nc\r\nd\r\ne", rows=5)
    pane.resize(20, 3)
    assert text(pane) == "c\nd\ne\n"
    assert text(pane, "recent") == "a\nb\nc\nd\ne\n"
    pane.resize(20, 5)
    assert text(pane) == "a\nb\nc\nd\ne\n"
    # blank rows below the cursor go first
    top = screen(b"x\r\ny", rows=6)
    top.resize(20, 3)
    assert text(top) == "x\ny\n"
    assert (top.rows, top.cols) == (3, 20)
    narrow = screen(b"0123456789")
    narrow.resize(4, 5)
    assert text(narrow) == "0123\n"


def test_ansi_renders_sgr_from_cell_attributes() -> None:
    pane = screen(b"\x1b[31mRED\x1b[0m plain \x1b[1;4;92mB\x1b[38;5;196mX\x1b[48;2;1;2;3mY")
    assert text(pane, ansi=True) == (
        "\x1b[31mRED\x1b[0m plain \x1b[1;4;92mB\x1b[0m\x1b[1;4;38;2;255;0;0mX"
        "\x1b[0m\x1b[1;4;38;2;255;0;0;48;2;1;2;3mY\x1b[0m\n"
    )
    assert text(pane) == "RED plain BXY\n"
    # detection has no ANSI form
    assert "\x1b" not in text(pane, "detection", ansi=True)
    assert "\x1b[31mRED" in text(pane, "recent_unwrapped", ansi=True)


def test_modes_and_replies() -> None:
    pane = screen(b"")
    assert bool(pane.bracketed_paste) is False
    pane.feed(b"\x1b[?2004h")
    assert pane.bracketed_paste
    pane.feed(b"\x1b[?2004l")
    assert bool(pane.bracketed_paste) is False
    pane.feed(b"ab\x1b[6n\x1b[5n")
    assert pane.take_replies() == b"\x1b[1;3R\x1b[0n"
    assert pane.take_replies() == b""
    pane.feed(b"\x1b]0;my title\x07")
    assert pane.title == "my title"


def test_device_control_strings_are_consumed_not_drawn() -> None:
    pane = screen(b"")
    for chunk in (b"a\x1bP+q5", b"44e\x1b", b"\\b\x1b_Gf=1;", b"AAAA\x1b\\c\x1b", b"[1md"):
        pane.feed(chunk)
    assert text(pane) == "abcd\n"


def test_wide_and_combining_characters() -> None:
    pane = screen("日本 e\u0301!".encode(), cols=8)
    assert text(pane) == "日本 é!\n"


def test_detection_is_the_recent_screen_as_text() -> None:
    pane = screen(b"".join(b"%d\r\n" % n for n in range(8)) + b"\x1b[32mprompt>", rows=3)
    assert text(pane, "detection") == "6\n7\nprompt>\n"
    assert pane.read("detection", lines=1) == ReadOutcome("prompt>\n", True)


def test_scrollback_is_bounded() -> None:
    pane = screen(b"x\r\n" * (MAX_SCROLLBACK + 50), cols=4, rows=2)
    recent = pane.read("recent", lines=1000)
    assert recent.truncated
    assert recent.text == "x\n" * 999


@settings(max_examples=examples(60), deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=1, max_value=40))
def test_any_bytes_in_any_chunking_read_the_same(data: bytes, cut: int) -> None:
    whole = PaneScreen(cols=8, rows=3)
    whole.feed(data)
    pieces = PaneScreen(cols=8, rows=3)
    for start in range(0, len(data), cut):
        pieces.feed(data[start : start + cut])
    for source in SOURCES:
        for ansi in (False, True):
            assert whole.read(source, ansi=ansi) == pieces.read(source, ansi=ansi)
            assert isinstance(whole.read(source, lines=2, ansi=ansi).text, str)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"\x1b[?1049h", b"\x1b[?1049l", b"\x1b[2J", b"\x1b[3J", b"\x1bc", b"\r\n", b"abc",
             b"\x1b[5;5H", b"\x1b[K", b"\x1b[1;2r", b"\x1bM", b"\x1b[L", b"\x1b[M", b"0123456789"]
        ),
        max_size=30,
    ),
    st.integers(min_value=1, max_value=6),
)  # fmt: skip
def test_terminal_sequences_and_resizes_never_break_reads(chunks: list[bytes], rows: int) -> None:
    pane = PaneScreen(cols=6, rows=4)
    for index, chunk in enumerate(chunks):
        pane.feed(chunk)
        if index % 7 == 3:
            pane.resize(3 + rows, rows)
        for source in SOURCES:
            read = pane.read(source, lines=3)
            assert len(read.text.splitlines()) <= 3


def test_undrawable_characters_are_skipped_not_the_rest_of_the_run() -> None:
    # pyte alone drops everything after a C0 control or a variation selector
    pane = screen("a\x01b ⚠\ufe0f ok \u200dz".encode())
    assert text(pane) == "ab ⚠ ok z\n"


def test_scrolling_a_region_makes_no_history() -> None:
    # a status line at the bottom: the program scrolls rows 1-3 only
    lines = b"".join(b"r%d\r\n" % n for n in range(6))
    pane = screen(b"\x1b[1;3r\x1b[4;1Hstatus\x1b[1;1H" + lines, rows=4)
    assert pane.scrollback_rows == 0
    assert text(pane) == "r4\nr5\n\nstatus\n"
    pane.feed(b"\x1b[r\x1b[4;1H\r\n\r\n")
    assert pane.scrollback_rows == 2
