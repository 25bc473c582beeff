//! Syntax colour for fenced code blocks, with syntect's bundled grammars and theme.
//!
//! The grammars and the theme load once, on the first code block, and are shared after that.
//! A language syntect does not know, or a line it cannot parse, falls back to plain code
//! colour: highlighting is decoration and never loses text.

use std::sync::LazyLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// The theme used for code; its background is ignored so the terminal's own shows through.
const THEME: &str = "base16-ocean.dark";

/// Colour of code that is not highlighted (unknown language, no language).
pub const PLAIN_CODE: Style = Style::new().fg(Color::LightYellow);

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEME_SET: LazyLock<Theme> = LazyLock::new(|| {
    ThemeSet::load_defaults()
        .themes
        .remove(THEME)
        .unwrap_or_default()
});

/// Loads the grammars and the theme, so the first code block on screen does not wait for it.
pub fn warm_up() {
    LazyLock::force(&SYNTAXES);
    LazyLock::force(&THEME_SET);
}

/// The code's lines as styled spans, one `Vec` per line (without line endings).
pub fn highlight(code: &str, language: &str) -> Vec<Vec<Span<'static>>> {
    let language = language.split([',', ' ']).next().unwrap_or_default().trim();
    let syntax = (!language.is_empty())
        .then(|| SYNTAXES.find_syntax_by_token(language))
        .flatten();
    let Some(syntax) = syntax else {
        return plain(code);
    };
    let mut highlighter = HighlightLines::new(syntax, &THEME_SET);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let spans = match highlighter.highlight_line(line, &SYNTAXES) {
            Ok(regions) => regions
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = clean(text);
                    (!text.is_empty()).then(|| Span::styled(text, to_style(style)))
                })
                .collect(),
            // A grammar that fails on this line: show it plain and carry on.
            Err(e) => {
                tracing::debug!("syntax highlighting failed: {e}");
                vec![Span::styled(clean(line), PLAIN_CODE)]
            }
        };
        out.push(spans);
    }
    out
}

fn plain(code: &str) -> Vec<Vec<Span<'static>>> {
    code.lines()
        .map(|line| vec![Span::styled(clean(line), PLAIN_CODE)])
        .collect()
}

/// Drops the line ending and expands tabs, which a terminal cell grid cannot hold.
fn clean(text: &str) -> String {
    text.trim_end_matches(['\n', '\r']).replace('\t', "    ")
}

fn to_style(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_language_gets_several_colours_and_keeps_its_text() {
        let lines = highlight("fn main() {\n\tlet x = \"hi\";\n}\n", "rust");
        assert_eq!(lines.len(), 3);
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text, ["fn main() {", "    let x = \"hi\";", "}"]);
        let colours: std::collections::HashSet<_> =
            lines.iter().flatten().filter_map(|s| s.style.fg).collect();
        assert!(colours.len() >= 3, "{colours:?}");
    }

    #[test]
    fn an_unknown_language_is_plain_code() {
        let lines = highlight("a\nb", "no-such-language");
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().flatten().all(|s| s.style == PLAIN_CODE));
    }
}
