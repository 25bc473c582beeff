//! The `context-pilot` binary: see the `cp_tui` library for everything it does.

fn main() -> std::process::ExitCode {
    cp_tui::cli::main()
}
