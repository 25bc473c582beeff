//! Walks pulldown-cmark's events and writes styled lines: the block structure (paragraphs,
//! headings, lists, quotes, code, tables, rules) becomes lines and prefixes, the inline
//! structure (bold, italics, code, links) becomes span styles.

use cp_base::theme;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::{highlight, highlight_from};
use super::table::Table;

/// The markdown extensions rendered.
pub(super) const OPTIONS: Options = Options::ENABLE_STRIKETHROUGH
    .union(Options::ENABLE_TABLES)
    .union(Options::ENABLE_TASKLISTS);

/// Colour of `inline code`.
const INLINE_CODE: Style = Style::new().fg(theme::CODE);
/// Two columns of indent set code apart from prose without a frame to copy along.
const CODE_INDENT: &str = "  ";
/// Bullets, numbers, quote bars, rules, link targets.
const DIM: Style = Style::new().fg(theme::MUTED);

/// Renders markdown `text` as styled lines for a `width`-column area. Long lines are left for
/// the caller to wrap; `width` sizes horizontal rules.
pub fn render(text: &str, width: u16) -> Vec<Line<'static>> {
    let mut writer = Writer::new(usize::from(width.max(1)));
    for event in Parser::new_ext(text, OPTIONS) {
        writer.event(event);
    }
    writer.finish()
}

/// Lines `from..` of a top-level code block holding `code`, as [`render`] writes them.
pub fn code_block_lines(code: &str, language: &str, from: usize) -> Vec<Line<'static>> {
    highlight_from(code, language, from)
        .into_iter()
        .map(|spans| {
            let mut line = vec![Span::raw(CODE_INDENT)];
            line.extend(spans);
            Line::from(line)
        })
        .collect()
}

/// Renders `text` as the continuation of a text whose lines so far are not empty and which
/// ends with finished top-level blocks: its first block starts after the blank line that
/// separates blocks, as it would in the whole text.
pub fn render_after_blocks(text: &str, width: u16) -> Vec<Line<'static>> {
    let mut writer = Writer::new(usize::from(width.max(1)));
    writer.lines_before = true;
    writer.blank_before_next = true;
    for event in Parser::new_ext(text, OPTIONS) {
        writer.event(event);
    }
    writer.finish()
}

/// One level of list nesting.
#[derive(Debug)]
struct List {
    /// The next item's number, or `None` for a bullet list.
    next: Option<u64>,
    /// Columns the current item's marker takes; its continuation lines indent as far.
    indent: usize,
}

/// A fenced or indented code block being collected.
#[derive(Debug)]
struct Code {
    language: String,
    text: String,
}

#[derive(Debug)]
struct Writer {
    width: usize,
    lines: Vec<Line<'static>>,
    /// The line being built; empty at the start of a line.
    spans: Vec<Span<'static>>,
    /// Inline styles in effect, innermost last.
    styles: Vec<Style>,
    lists: Vec<List>,
    /// The marker of a list item whose first line is not written yet.
    marker: Option<String>,
    quote_depth: usize,
    code: Option<Code>,
    table: Option<Table>,
    /// The target of the link being written, shown after its text when they differ.
    link: Option<(String, String)>,
    /// A block ended: the next block starts after a blank line.
    blank_before_next: bool,
    /// Lines came before the text being written (it continues a text rendered in pieces).
    lines_before: bool,
}

impl Writer {
    fn new(width: usize) -> Self {
        Self {
            width,
            lines: Vec::new(),
            spans: Vec::new(),
            styles: Vec::new(),
            lists: Vec::new(),
            marker: None,
            quote_depth: 0,
            code: None,
            table: None,
            link: None,
            blank_before_next: false,
            lines_before: false,
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.end_line();
        self.lines
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => self.span(code.into_string(), self.style().patch(INLINE_CODE)),
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                self.span(math.into_string(), self.style().patch(INLINE_CODE));
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(name) => self.span(format!("[^{name}]"), DIM),
            Event::SoftBreak | Event::HardBreak => self.end_line(),
            Event::Rule => {
                self.start_block();
                self.span(
                    "─".repeat(self.width.saturating_sub(self.prefix_width())),
                    DIM,
                );
                self.end_block();
            }
            Event::TaskListMarker(done) => {
                self.span(if done { "[x] " } else { "[ ] " }.to_owned(), DIM);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph
            | Tag::HtmlBlock
            | Tag::FootnoteDefinition(_)
            | Tag::MetadataBlock(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.styles.push(heading_style(level));
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.into_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(Code {
                    language,
                    text: String::new(),
                });
            }
            Tag::List(first) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    // A nested list starts on its own line inside the item.
                    self.end_line();
                }
                self.lists.push(List {
                    next: first,
                    indent: 2,
                });
            }
            Tag::Item => self.start_item(),
            Tag::Table(_) => {
                self.start_block();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.push_style(
                    Style::new()
                        .fg(theme::LINK)
                        .add_modifier(Modifier::UNDERLINED),
                );
                self.link = Some((dest_url.into_string(), String::new()));
            }
            Tag::Image { dest_url, .. } => {
                self.span("[image: ".to_owned(), DIM);
                self.push_style(Style::new().add_modifier(Modifier::ITALIC));
                self.link = Some((dest_url.into_string(), String::new()));
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::FootnoteDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.end_block(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.end_block();
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::List(_) => {
                self.end_line();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank_before_next = true;
                }
            }
            TagEnd::Item => {
                self.end_line();
                self.marker = None;
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.end_row();
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.end_row();
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    table.end_cell();
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some((url, text)) = self.link.take()
                    && !url.is_empty()
                    && url != text
                {
                    self.span(format!(" ({url})"), DIM);
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                self.link = None;
                self.span("]".to_owned(), DIM);
            }
        }
    }

    /// Text: code goes to the code block, everything else is written line by line.
    fn text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            code.text.push_str(text);
            return;
        }
        if let Some((_, link_text)) = &mut self.link {
            link_text.push_str(text);
        }
        let style = self.style();
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.end_line();
            }
            if !line.is_empty() {
                self.span(line.to_owned(), style);
            }
        }
    }

    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::default(), |acc, s| acc.patch(*s))
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(style);
    }

    /// Appends a span to the current line (or table cell), writing the line's prefix first.
    fn span(&mut self, text: String, style: Style) {
        if let Some(table) = &mut self.table {
            table.cell.push(Span::styled(text, style));
            return;
        }
        self.begin_line();
        self.spans
            .push(Span::styled(text.replace('\t', "    "), style));
    }

    /// Writes the line's prefix when nothing is on the line yet.
    fn begin_line(&mut self) {
        if self.spans.is_empty() {
            self.spans = self.prefix();
        }
    }

    /// Quote bars, then list indentation, with the pending item marker in its place.
    fn prefix(&mut self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        if self.quote_depth > 0 {
            spans.push(Span::styled("│ ".repeat(self.quote_depth), DIM));
        }
        if let Some((current, outer)) = self.lists.split_last() {
            let outer: usize = outer.iter().map(|l| l.indent).sum();
            if outer > 0 {
                spans.push(Span::raw(" ".repeat(outer)));
            }
            match self.marker.take() {
                Some(marker) => spans.push(Span::styled(marker, DIM)),
                None => spans.push(Span::raw(" ".repeat(current.indent))),
            }
        }
        spans
    }

    fn prefix_width(&self) -> usize {
        self.quote_depth * 2 + self.lists.iter().map(|l| l.indent).sum::<usize>()
    }

    fn start_item(&mut self) {
        self.end_line();
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        let marker = match &mut list.next {
            Some(n) => {
                let marker = format!("{n}. ");
                *n += 1;
                marker
            }
            None => "• ".to_owned(),
        };
        list.indent = marker.chars().count();
        self.marker = Some(marker);
    }

    /// Ends the line being built, if any.
    fn end_line(&mut self) {
        if !self.spans.is_empty() {
            self.lines.push(Line::from(std::mem::take(&mut self.spans)));
        }
    }

    /// A block starts: after a blank line if a block came before it (not inside a tight list
    /// item, whose text follows the marker directly).
    fn start_block(&mut self) {
        self.end_line();
        if std::mem::take(&mut self.blank_before_next)
            && (self.lines_before || !self.lines.is_empty())
        {
            if self.quote_depth > 0 {
                self.lines
                    .push(Line::styled("│ ".repeat(self.quote_depth), DIM));
            } else {
                self.lines.push(Line::default());
            }
        }
    }

    fn end_block(&mut self) {
        self.end_line();
        self.blank_before_next = true;
    }

    fn end_code(&mut self) {
        let Some(code) = self.code.take() else {
            return;
        };
        for spans in highlight(&code.text, &code.language) {
            self.begin_line();
            self.spans.push(Span::raw(CODE_INDENT));
            self.spans.extend(spans);
            self.end_line();
        }
        self.end_block();
    }

    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        for spans in table.lines() {
            self.begin_line();
            self.spans.extend(spans);
            self.end_line();
        }
        self.end_block();
    }
}

fn heading_style(level: HeadingLevel) -> Style {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    match level {
        HeadingLevel::H1 => bold.fg(theme::HEADING).add_modifier(Modifier::UNDERLINED),
        HeadingLevel::H2 => bold.fg(theme::HEADING),
        HeadingLevel::H3 => bold.fg(theme::SUBHEADING),
        _ => bold,
    }
}
