//! The second-stop commit gate (seed 000 R5).

use std::fmt::Write;

/// The message that blocks a second stop while gated files are uncommitted.
pub(crate) fn gate_message(uncommitted_gated: &[String]) -> String {
    let mut out = format!(
        "Commit your changes before stopping. {} file(s) that must be committed are still \
         uncommitted:\n",
        uncommitted_gated.len()
    );
    for path in uncommitted_gated {
        let _ = writeln!(out, "  {path}");
    }
    out.push_str("Commit them (or revert what should not be kept), then stop again.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_file() {
        let msg = gate_message(&["src/a.py".into(), "config.yml".into()]);
        assert!(msg.starts_with("Commit your changes before stopping."));
        assert!(msg.contains("\n  src/a.py\n  config.yml\n"));
    }
}
