//! What this binary is and how it got here, for `context-pilot --version` and `doctor`: the
//! version, the commit it was built from, and the channel that installed it.
//!
//! The channel is read from a marker file each package puts next to the binary's folder
//! ([`CHANNEL_MARKER`], `<prefix>/share/context-pilot/install-channel` for a binary in
//! `<prefix>/bin/`): the npm packages and the wheel carry one saying `npm` or `pip`, the
//! release script's tarball one saying `release`. It stays out of `bin/`, where pipx would
//! offer it as a command. A binary without one was built by cargo (`cargo install`, or a
//! build of the checkout).
//!
//! ```
//! let about = cp_setup::about::About::of_this_binary();
//! assert!(about.version_line().starts_with(env!("CARGO_PKG_VERSION")));
//! ```

use std::path::{Path, PathBuf};

/// The file that names the channel which installed the binary, relative to the folder above
/// the binary's (`<prefix>/bin/context-pilot` → `<prefix>/share/context-pilot/install-channel`).
pub const CHANNEL_MARKER: &str = "share/context-pilot/install-channel";

/// The commit the binary was built from (`unknown` outside a git checkout).
pub const COMMIT: &str = env!("CP_COMMIT");

/// How the binary was installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `npm install -g context-pilot` (the platform package's binary).
    Npm,
    /// `pip`, `pipx` or `uv tool install context-pilot` (the wheel).
    Pip,
    /// The release script's binary, unpacked by hand.
    Release,
    /// Built by cargo: `cargo install`, or a build of the checkout.
    Cargo,
}

impl Channel {
    /// The marker's word, e.g. `npm`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Npm => "npm",
            Self::Pip => "pip",
            Self::Release => "release",
            Self::Cargo => "cargo",
        }
    }

    /// The channel a marker's text names; `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Npm, Self::Pip, Self::Release, Self::Cargo]
            .into_iter()
            .find(|c| c.word() == text.trim())
    }

    /// How to update a binary from this channel.
    pub fn update_hint(self) -> &'static str {
        match self {
            Self::Npm => "npm install -g context-pilot@latest",
            Self::Pip => "pipx upgrade context-pilot (or pip install -U context-pilot)",
            Self::Release => "download the newest release and unpack it over this one",
            Self::Cargo => "cargo install context-pilot (or rebuild the checkout)",
        }
    }
}

/// The version, commit and channel of a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct About {
    pub version: &'static str,
    pub commit: &'static str,
    pub channel: Channel,
    /// Where the binary is, when it can be told.
    pub path: Option<PathBuf>,
}

impl About {
    /// This very binary: its marker decides the channel.
    pub fn of_this_binary() -> Self {
        let path = std::env::current_exe().and_then(std::fs::canonicalize).ok();
        let channel = path.as_deref().map_or(Channel::Cargo, channel_beside);
        Self {
            version: env!("CARGO_PKG_VERSION"),
            commit: COMMIT,
            channel,
            path,
        }
    }

    /// `0.1.0 (commit 0123abcd4567, installed with npm)`, what `--version` prints after the
    /// name.
    pub fn version_line(&self) -> String {
        let how = match self.channel {
            Channel::Cargo => "built with cargo".to_owned(),
            Channel::Release => "from the release script".to_owned(),
            other => format!("installed with {}", other.word()),
        };
        format!("{} (commit {}, {how})", self.version, self.commit)
    }
}

/// The channel the marker of `binary` names; [`Channel::Cargo`] without a marker (or with one
/// that names no channel).
pub fn channel_beside(binary: &Path) -> Channel {
    binary
        .parent()
        .and_then(Path::parent)
        .and_then(|prefix| std::fs::read_to_string(prefix.join(CHANNEL_MARKER)).ok())
        .and_then(|text| Channel::parse(&text))
        .unwrap_or(Channel::Cargo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_beside_the_binary_names_the_channel() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("bin/context-pilot");
        assert_eq!(channel_beside(&binary), Channel::Cargo);
        let marker = dir.path().join(CHANNEL_MARKER);
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        std::fs::write(&marker, "npm\n").unwrap();
        assert_eq!(channel_beside(&binary), Channel::Npm);
        std::fs::write(&marker, "pip").unwrap();
        assert_eq!(channel_beside(&binary), Channel::Pip);
        std::fs::write(&marker, "homebrew").unwrap();
        assert_eq!(channel_beside(&binary), Channel::Cargo);
    }

    #[test]
    fn the_version_line_names_version_commit_and_channel() {
        let about = About {
            version: "1.2.3",
            commit: "abc",
            channel: Channel::Pip,
            path: None,
        };
        assert_eq!(
            about.version_line(),
            "1.2.3 (commit abc, installed with pip)"
        );
        let cargo = About {
            channel: Channel::Cargo,
            ..about
        };
        assert_eq!(cargo.version_line(), "1.2.3 (commit abc, built with cargo)");
        assert_ne!(COMMIT, "", "the build script sets the commit");
    }
}
