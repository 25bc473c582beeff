//! Entering and leaving full-screen mode, with restoration guaranteed on every exit path.
//!
//! The guard restores on drop; a chained panic hook restores before the panic message prints,
//! so a crash never leaves the user's terminal in raw mode. The terminal's title is kept too:
//! it is pushed on the xterm title stack when full-screen mode starts (the workflow alerts
//! change it) and popped when it ends, so the title from before is back on every exit path.

use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is currently in full-screen mode (shared with the panic hook).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// XTWINOPS 22;0: save the window and icon titles on the terminal's title stack. Terminals
/// without one ignore it.
const PUSH_TITLE: &[u8] = b"\x1b[22;0t";
/// XTWINOPS 23;0: restore the titles last saved.
const POP_TITLE: &[u8] = b"\x1b[23;0t";

/// Enters full-screen mode's screen and input modes, after saving the title.
fn enter_modes(stdout: &mut Stdout) -> io::Result<()> {
    stdout.write_all(PUSH_TITLE)?;
    execute!(
        stdout,
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )
}

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Owns full-screen mode; dropping it restores the terminal.
pub struct TerminalGuard {
    pub terminal: Tui,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = enter_modes(&mut stdout) {
            restore();
            return Err(e);
        }
        let terminal = match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        Ok(Self { terminal })
    }
}

impl TerminalGuard {
    /// Leaves full-screen mode for a moment (before exec); [`TerminalGuard::resume`] undoes it.
    pub fn suspend(&mut self) {
        let _ = self.terminal.show_cursor();
        restore();
    }

    /// Re-enters full-screen mode after [`TerminalGuard::suspend`], with a full redraw.
    pub fn resume(&mut self) -> io::Result<()> {
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        enter_modes(&mut stdout)?;
        execute!(stdout, Clear(ClearType::All))?;
        // Forget what was drawn before, so the next frame repaints every cell. (Not
        // `Terminal::clear`: it asks the terminal for the cursor position and fails where
        // nothing answers.)
        self.terminal.swap_buffers();
        self.terminal.swap_buffers();
        Ok(())
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = self.terminal.show_cursor();
        restore();
    }
}

/// Gives the terminal back the title it had before full-screen mode (a workflow alert
/// changed it), and saves it again for the exit. Nothing outside full-screen mode.
pub fn restore_title() {
    if !ACTIVE.load(Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    let restored = stdout
        .write_all(POP_TITLE)
        .and_then(|()| stdout.write_all(PUSH_TITLE))
        .and_then(|()| stdout.flush());
    if let Err(e) = restored {
        tracing::warn!("restoring the terminal's title failed: {e}");
    }
}

/// Leaves full-screen mode if it is on. Safe to call more than once and from a panic hook.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    if let Err(e) = execute!(
        stdout,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    ) {
        tracing::warn!("restoring the terminal screen failed: {e}");
    }
    if let Err(e) = stdout.write_all(POP_TITLE) {
        tracing::warn!("restoring the terminal's title failed: {e}");
    }
    if let Err(e) = disable_raw_mode() {
        tracing::warn!("leaving raw mode failed: {e}");
    }
    let _ = stdout.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}
