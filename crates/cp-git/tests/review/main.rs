//! The review actions against real repositories: reverting hunks and files byte for byte
//! (CRLF, Latin-1, no final newline, names with a tab or not UTF-8, a file that became a
//! symlink, a staged hunk), what a reading lists (conflicts, submodules, nested repositories,
//! `status.showUntrackedFiles`, a large untracked tree read once), committing exactly the
//! listed files (a refused commit leaves the index as it was), and a property test: any edit
//! reverted hunk by hunk gives back HEAD's bytes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

mod commit;
mod property;
mod reading;
mod revert;
mod util;
