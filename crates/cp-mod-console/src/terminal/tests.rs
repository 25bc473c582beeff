use std::fmt::Write;

use super::*;

fn lines(bytes: &[u8]) -> Vec<String> {
    terminal_lines(bytes, (5, 40))
}

#[test]
fn an_erased_progress_bar_leaves_nothing() {
    // cargo's way: the bar, `\r`, erase to the end of line, then the next message.
    let out = b"   Compiling regex v1.0\n    Building [=====>    ] 2/3: regex-syntax, regex-syntax(test)\r\x1b[Kerror: could not compile `calc`\nend\n";
    assert_eq!(
        terminal_lines(out, (5, 120)),
        [
            "   Compiling regex v1.0",
            "error: could not compile `calc`",
            "end"
        ]
    );
}

#[test]
fn a_shorter_line_after_a_bare_carriage_return_keeps_the_rest_of_the_longer_one() {
    // Without an erase, a terminal shows the old line's end: so must the text.
    assert_eq!(lines(b"progress 100%\rdone\n"), ["doneress 100%"]);
    assert_eq!(
        lines(b"a 10%\ra 99%\r\x1b[2Kfinished\r\nnext"),
        ["finished", "next"]
    );
}

#[test]
fn erase_in_line_and_display() {
    // `ESC[K` from the cursor on, `ESC[1K` up to it, `ESC[2K` the whole row.
    assert_eq!(lines(b"abcdef\x1b[3D\x1b[K\n"), ["abc"]);
    assert_eq!(lines(b"abcdef\x1b[3D\x1b[1K\n"), ["    ef"]);
    assert_eq!(lines(b"abcdef\x1b[2Kxy\n"), ["      xy"]);
    // `ESC[2J` clears the screen, `ESC[H` goes home.
    assert_eq!(lines(b"old\nrows\n\x1b[2J\x1b[Hnew\n"), ["new"]);
}

#[test]
fn cursor_up_redraws_and_colours_are_resolved() {
    let out = b"\x1b[32mPASS\x1b[0m a\nRUNS b\n\x1b[1A\x1b[2K\x1b[31mFAIL\x1b[0m b\ndone\n";
    assert_eq!(lines(out), ["PASS a", "FAIL b", "done"]);
}

#[test]
fn cursor_moves_place_text_where_a_terminal_puts_it() {
    // Absolute position, column, forward and back.
    assert_eq!(lines(b"\x1b[2;3Hx\x1b[1;1Hy\n"), ["y", "  x"]);
    assert_eq!(lines(b"abc\x1b[5Gz\x1b[2Dq\n"), ["abcqz"]);
    // A status line redrawn in place with save and restore.
    assert_eq!(lines(b"head\n\x1b7one\x1b8two\n"), ["head", "two"]);
}

#[test]
fn backspace_moves_back_and_overwrites() {
    assert_eq!(lines(b"abc\x08\x08XY"), ["aXY"]);
    // A spinner: one character redrawn in place.
    assert_eq!(lines(b"wait |\x08/\x08-\x08\\\x08 \n"), ["wait"]);
}

#[test]
fn colours_titles_and_other_sequences_leave_no_trace() {
    let raw = b"\x1b[1;31merror\x1b[0m: bad\r\n\x1b]0;title\x07\x1b[38;5;208mok\x1b[m\x1b[?25l\r\n";
    assert_eq!(lines(raw), ["error: bad", "ok"]);
}

#[test]
fn wide_characters_take_two_columns() {
    assert_eq!(lines("日本語 ok\n".as_bytes()), ["日本語 ok"]);
    // A `\r` then two narrow characters overwrite one wide one.
    assert_eq!(lines("表x\rab\n".as_bytes()), ["abx"]);
    // Twenty wide characters fill a 40-column row; the next one wraps, joined back.
    let wide = "字".repeat(21);
    assert_eq!(lines(format!("{wide}\n").as_bytes()), [wide]);
}

#[test]
fn wrapped_rows_are_one_line_and_long_output_keeps_every_line() {
    let long = "x".repeat(100);
    assert_eq!(
        lines(format!("{long}\nnext\n").as_bytes()),
        [long, "next".into()]
    );
    let many = (0..5000).fold(String::new(), |mut s, i| {
        let _ = write!(s, "line {i}\r\n");
        s
    });
    let got = lines(many.as_bytes());
    assert_eq!(got.len(), 5000);
    assert_eq!(got[0], "line 0");
    assert_eq!(got[2345], "line 2345");
    assert_eq!(got[4999], "line 4999");
}

#[test]
fn a_redraw_across_a_batch_boundary_keeps_the_screen() {
    // Enough lines to force a rebuild, then a redraw of the last line on the screen.
    let mut out = (0..700).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "l{i}");
        s
    });
    out.push_str("progress 10%\r\x1b[Kprogress done\n");
    let got = lines(out.as_bytes());
    assert_eq!(got.len(), 701);
    assert_eq!(got[699], "l699");
    assert_eq!(got[700], "progress done");
}

#[test]
fn the_tail_of_a_long_output_reaches_past_the_screen() {
    // 12 lines on a 5-row screen: the last 8 include 3 that scrolled off.
    let out = (1..=12).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "n{i}");
        s
    });
    assert_eq!(
        last_lines(out.as_bytes(), (5, 40), 8),
        "n5\nn6\nn7\nn8\nn9\nn10\nn11\nn12"
    );
    assert_eq!(last_lines(b"1\n2\n3\n4\n\n", (5, 40), 2), "3\n4");
    assert_eq!(last_lines(b"", (5, 40), 3), "");
    assert_eq!(terminal_text(b"", (5, 40)), "");
    assert_eq!(terminal_text(b"a\r\nb", (5, 40)), "a\nb\n");
}

#[test]
fn a_streaming_reader_gives_scrolled_lines_once_and_the_screen_as_it_is_now() {
    let mut reader = TerminalReader::new((3, 20));
    reader.feed(b"one\ntwo\nbar 10%");
    assert!(reader.take_scrolled().is_empty());
    assert_eq!(reader.screen_lines(), ["one", "two", "bar 10%"]);
    // The bar is erased and the output goes on: `one` and `two` scroll off for good.
    reader.feed(b"\r\x1b[Kthree\nfour\n");
    assert_eq!(reader.take_scrolled(), ["one", "two"]);
    assert!(reader.take_scrolled().is_empty());
    assert_eq!(reader.screen_lines(), ["three", "four"]);
    // The screen is rebuilt after a take: a redraw still lands where it should.
    reader.feed(b"\x1b[1A\x1b[2Kfive\n");
    assert_eq!(reader.into_lines(), ["three", "five"]);
}

#[test]
fn a_line_wrapped_across_the_top_edge_is_given_whole() {
    let mut reader = TerminalReader::new((2, 10));
    reader.feed(b"abcdefghijKLMNOPQRST");
    reader.feed(b"uv\nw\n");
    // Both rows of the wrapped line scrolled off: it is final, and given as one line.
    let scrolled = reader.take_scrolled();
    assert_eq!(scrolled, ["abcdefghijKLMNOPQRSTuv"]);
    assert_eq!(reader.into_lines(), ["w"]);
}
