//! The colours of Context Pilot's screen, named by what they mean. The TUI and every panel
//! draw with these names, never with a colour of their own, so the look changes in one place
//! and one meaning always has one colour.

use ratatui::style::Color;

/// Something failed: a red test, an error, a killed process, a deleted file.
pub const FAILURE: Color = Color::Red;
/// It worked: a green test, a passed callback, a new file.
pub const SUCCESS: Color = Color::Green;
/// Going on, or worth a look: a run in progress, a warning, a modified file, a search match.
pub const ATTENTION: Color = Color::Yellow;
/// Secondary text (hints, times, borders) and the status bar's ground.
pub const MUTED: Color = Color::DarkGray;
/// Where the eye goes: titles, keys, the focused selection, the `cp` label.
pub const ACCENT: Color = Color::Cyan;
/// Text on a coloured ground: a selection, a badge, a search match.
pub const ON_HIGHLIGHT: Color = Color::Black;
/// The ground of a bar drawn over the content (the search line).
pub const BAR: Color = Color::Black;
/// A selection without the focus, and secondary text on the status bar.
pub const SUBDUED: Color = Color::Gray;
/// Text at full strength on a dark ground.
pub const STRONG: Color = Color::White;
/// Neither good nor bad: an information notice, a submodule, the files a change touched.
pub const INFO: Color = Color::Blue;
/// The person is asked: dialogs and approval gates; also a renamed file and a lost console.
pub const ASK: Color = Color::Magenta;
/// On the status bar: what waits for the person (a reload, a hidden approval gate).
pub const URGENT: Color = Color::LightMagenta;
/// On the status bar: a flash message.
pub const FLASH: Color = Color::LightYellow;
/// On the status bar: the model and a workflow's status.
pub const LABEL: Color = Color::LightCyan;
/// A conflicted file in the Changes panel.
pub const CONFLICT: Color = Color::LightRed;
/// Markdown: top-level headings, then third-level ones.
pub const HEADING: Color = Color::LightMagenta;
pub const SUBHEADING: Color = Color::LightCyan;
/// Markdown: code, inline and in blocks without a highlighted language.
pub const CODE: Color = Color::LightYellow;
/// Markdown: links.
pub const LINK: Color = Color::LightBlue;
/// The ground of an added line in a diff.
pub const ADDED_BG: Color = Color::Rgb(0, 55, 0);
/// The ground of a removed line in a diff.
pub const REMOVED_BG: Color = Color::Rgb(70, 0, 0);
