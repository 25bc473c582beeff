//! The exit codes of `context-pilot run`: a leaf that the engine and the errors both name.

/// Exit code of a run stopped by a merge conflict, or a merge still red after its last try,
/// that no one answered.
pub const EXIT_CONFLICT: i32 = 3;

/// Exit code of a run interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it);
/// `--resume` continues it.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Exit code of a run aborted at an approval gate.
pub const EXIT_ABORTED: i32 = 2;
/// Exit code of a run that failed (bad workflow, failed phase, no answer).
pub const EXIT_FAILED: i32 = 1;
