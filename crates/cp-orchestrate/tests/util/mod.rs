//! Shared helpers: real git repositories in temp dirs.

#![allow(
    dead_code,
    reason = "shared by several test binaries; each uses a part of it"
)]

pub mod scripted;
pub mod tester;
pub mod writers;

use std::ops::Deref;

use cp_base::Project;
use cp_e2e::TempRepo;

/// A git repository in a temp dir ([`TempRepo`]), seen as a project.
pub struct Repo(TempRepo);

impl Deref for Repo {
    type Target = TempRepo;

    fn deref(&self) -> &TempRepo {
        &self.0
    }
}

impl Repo {
    /// `git init` with an identity, and nothing committed.
    pub fn empty() -> Self {
        Self(TempRepo::empty())
    }

    /// A repository with `files` committed.
    pub fn with_commit(files: &[(&str, &str)]) -> Self {
        Self(TempRepo::with_commit(files))
    }

    pub fn project(&self) -> Project {
        Project::at(self.root())
    }
}
