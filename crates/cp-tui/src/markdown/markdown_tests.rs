//! Markdown rendered into a buffer: snapshots of the styled cells, plus direct checks of the
//! styles a reader relies on.

use cp_base::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::writer::render;

const SAMPLE: &str = r"# Plan

Nothing is **broken**, but *one* test uses `sleep`.

## Steps

1. Read `calc.py`
2. Fix the bug
   - keep the API

> quoted advice

```python
def add(a, b):
    return a + b  # sum
```

| file | status |
|---|---|
| calc.py | **failed** |

See [the docs](https://example.invalid/docs).
";

fn buffer(lines: Vec<Line<'static>>, width: u16) -> Buffer {
    let height = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    Paragraph::new(lines).render(buf.area, &mut buf);
    buf
}

/// The first cell of `needle` on the row that holds it.
fn cell<'a>(buf: &'a Buffer, needle: &str) -> &'a ratatui::buffer::Cell {
    for y in 0..buf.area.height {
        let row: String = (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_owned())
            .collect();
        if let Some(byte) = row.find(needle) {
            let x = row[..byte].chars().count();
            return &buf[(u16::try_from(x).unwrap(), y)];
        }
    }
    panic!("{needle:?} not on screen:\n{buf:?}");
}

#[test]
fn markdown_renders_styled_blocks() {
    let buf = buffer(render(SAMPLE, 50), 50);
    // No markdown syntax is left on screen.
    let text: String = buf
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    for raw in ["**", "```", "# Plan", "`sleep`", "|---"] {
        assert!(!text.contains(raw), "{raw:?} shown raw:\n{buf:?}");
    }
    assert!(cell(&buf, "Plan").modifier.contains(Modifier::BOLD));
    assert!(cell(&buf, "broken").modifier.contains(Modifier::BOLD));
    assert!(cell(&buf, "one").modifier.contains(Modifier::ITALIC));
    assert_eq!(cell(&buf, "sleep").fg, theme::CODE);
    assert_eq!(cell(&buf, "1. Read").fg, theme::MUTED);
    assert_eq!(cell(&buf, "• keep").fg, theme::MUTED);
    // Code is highlighted: the keyword and the comment differ in colour from each other.
    let keyword = cell(&buf, "def").fg;
    let comment = cell(&buf, "# sum").fg;
    assert!(matches!(keyword, Color::Rgb(..)), "{keyword:?}");
    assert_ne!(keyword, comment);
    assert!(cell(&buf, "file").modifier.contains(Modifier::BOLD));
    assert!(
        cell(&buf, "the docs")
            .modifier
            .contains(Modifier::UNDERLINED)
    );
    insta::assert_debug_snapshot!(buf);
}

#[test]
fn nested_lists_indent_under_their_item() {
    let lines: Vec<String> = render("- a\n  - b\n    c\n- d\n", 40)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(lines, ["• a", "  • b", "    c", "• d"]);
}

#[test]
fn plain_text_keeps_its_lines() {
    let lines: Vec<String> = render("first line\nsecond line\n\nnew paragraph", 40)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(lines, ["first line", "second line", "", "new paragraph"]);
}

#[test]
fn unclosed_markup_while_streaming_is_shown_as_text() {
    // Half a message arrives: nothing is lost, nothing panics.
    let lines: Vec<String> = render("**bold and ```py\nx = 1", 40)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(lines.concat(), "**bold and ```pyx = 1");
    let code: Vec<String> = render("```rust\nfn main() {", 40)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(code, ["  fn main() {"]);
}
