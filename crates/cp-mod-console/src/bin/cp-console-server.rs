//! A stand-alone console server, for this crate's tests and benchmarks. The product binary
//! exposes the same thing as `context-pilot console-server --project DIR`.
//!
//! Usage: `cp-console-server [console-server] --project DIR`

use std::path::PathBuf;
use std::process::ExitCode;

use cp_mod_console::{ServerOptions, run_server};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "console-server") {
        args.next();
    }
    let mut project: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        if arg == "--project" {
            project = args.next().map(PathBuf::from);
        } else {
            eprintln!(
                "cp-console-server: unexpected argument {}",
                arg.to_string_lossy()
            );
            return ExitCode::from(2);
        }
    }
    let Some(project) = project else {
        eprintln!("usage: cp-console-server [console-server] --project DIR");
        return ExitCode::from(2);
    };
    match run_server(ServerOptions::from_env(project)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cp-console-server: {e}");
            ExitCode::FAILURE
        }
    }
}
