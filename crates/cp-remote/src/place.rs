//! The seam: a [`Place`] runs Context Pilot's jobs somewhere. It takes the commits a job needs
//! into its own clone of the project ([`Place::send`]) and starts `context-pilot <command>`
//! there ([`Place::start`]), whose event lines come back on a [`Job`]. This machine
//! ([`LocalPlace`]) and an ssh host ([`SshPlace`]) are two places; a Kubernetes engine would
//! be a third (send: a push to a remote the cluster reaches; start: a Job whose pod's log is
//! the event stream).
//!
//! Nothing of the person's environment crosses. A process started on this machine gets a
//! clean environment ([`KEPT_ENV`]: `PATH`, `HOME`, the user's names, the locale, the ssh
//! agent's socket, the XDG folders). ssh, and the `git push` that runs it, get less
//! ([`SSH_ENV`]: `PATH` and the agent's socket), because ssh sends whatever variables the
//! person's configuration names (`SendEnv`), and no option on the command line can stop that:
//! ssh reads the command line before the configuration files, and their `SendEnv` lines add to
//! the list after it. A variable sent is a variable a host accepting it (`AcceptEnv`) would
//! use: `XDG_CONFIG_HOME` would make the host read its trust from this machine's folder, not
//! its own. ssh forwards no agent, no X11 and no port.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::RemoteError;
use crate::clone::prepare_clone;

/// The environment variable naming an ssh configuration file to use instead of the person's
/// own (`ssh -F`).
pub const SSH_CONFIG_ENV: &str = "CONTEXT_PILOT_SSH_CONFIG";

/// What every ssh connection of a run says, whatever the person's configuration: no prompt
/// (a run has no one to ask), nothing forwarded, a dead link noticed. (What it may send is
/// kept small by its environment, [`SSH_ENV`].)
pub const SSH_OPTIONS: &[&str] = &[
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ForwardAgent=no",
    "-o",
    "ForwardX11=no",
    "-o",
    "ClearAllForwardings=yes",
    "-o",
    "PermitLocalCommand=no",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "ConnectTimeout=10",
];

/// The variables a started process keeps; everything else (API keys first) stays behind.
const KEPT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "SSH_AUTH_SOCK",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
];

/// The variables ssh (and the `git push` that starts it) keeps: what it needs here and
/// nothing a host could take for its own. ssh finds the person's home and name in the user
/// database, not in `HOME` or `USER`; `PATH` finds a `ProxyCommand`'s program.
pub const SSH_ENV: &[&str] = &["PATH", "SSH_AUTH_SOCK"];

/// A place that runs jobs.
pub trait Place: Send + Sync {
    /// Its name, as the run's lines and proofs say it.
    fn name(&self) -> &str;

    /// Sends `commit` of the repository at `repo` into the place's clone of the project
    /// `key`, as `refname` (with the history it needs and the place lacks).
    fn send(&self, repo: &Path, key: &str, commit: &str, refname: &str) -> Result<(), RemoteError>;

    /// Fetches `refname` of the place's clone of the project `key` into the repository at
    /// `repo` (its objects, and `FETCH_HEAD`).
    fn fetch(&self, repo: &Path, key: &str, refname: &str) -> Result<(), RemoteError>;

    /// Starts `context-pilot` with `args` there.
    fn start(&self, args: &[&str]) -> Result<Job, RemoteError>;

    /// Whether it can be reached now, found out in about `within` at most (its link is up and
    /// it lets the run in).
    fn answers(&self, within: Duration) -> bool;
}

/// A started job: its input, its event lines, and its end. Dropping it ends it.
pub struct Job {
    place: String,
    child: Child,
    input: Option<ChildStdin>,
    output: Option<BufReader<ChildStdout>>,
    /// Reads its standard error as it comes, keeping the last lines: a job that writes more
    /// there than a pipe holds must not stall while only its output is read.
    errors: Option<std::thread::JoinHandle<String>>,
}

/// How many of a job's last standard-error lines [`Job::finish`] returns.
const ERROR_TAIL_LINES: usize = 5;

/// Reads `stream` to its end, keeping its last [`ERROR_TAIL_LINES`] lines.
fn error_tail(stream: impl std::io::Read) -> String {
    let mut tail = std::collections::VecDeque::with_capacity(ERROR_TAIL_LINES + 1);
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                tail.push_back(String::from_utf8_lossy(&line).trim_end().to_owned());
                if tail.len() > ERROR_TAIL_LINES {
                    tail.pop_front();
                }
            }
        }
    }
    Vec::from(tail).join("\n")
}

impl Job {
    pub(crate) fn spawn(place: &str, mut command: Command) -> Result<Self, RemoteError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| RemoteError::Start {
                what: format!("a job on {place}"),
                source,
            })?;
        let input = child.stdin.take();
        let output = child.stdout.take().map(BufReader::new);
        let errors = child
            .stderr
            .take()
            .map(|stderr| std::thread::spawn(move || error_tail(stderr)));
        Ok(Self {
            place: place.to_owned(),
            child,
            input,
            output,
            errors,
        })
    }

    /// Writes one line to its input (kept open: closing it asks the job to stop).
    pub fn send_line(&mut self, line: &str) -> Result<(), RemoteError> {
        let failed = |e: std::io::Error| RemoteError::NoResult {
            host: self.place.clone(),
            detail: format!("cannot write its input: {e}"),
        };
        let Some(input) = self.input.as_mut() else {
            return Ok(());
        };
        input.write_all(line.as_bytes()).map_err(failed)?;
        input.write_all(b"\n").map_err(failed)?;
        input.flush().map_err(failed)
    }

    /// The next line it printed, `None` at its end.
    pub fn next_line(&mut self) -> Option<String> {
        let output = self.output.as_mut()?;
        let mut line = String::new();
        match output.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end().to_owned()),
        }
    }

    /// Its process id here (ssh's, for a host), for a watcher that ends it.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Closes its input and waits for its end; returns how it ended and the last of what it
    /// wrote on standard error.
    pub fn finish(mut self) -> (Option<ExitStatus>, String) {
        drop(self.input.take());
        let status = self.child.wait().ok();
        let tail = self
            .errors
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default();
        (status, tail)
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        drop(self.input.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Clears `command`'s environment but for [`KEPT_ENV`].
pub fn clean_env(command: &mut Command) {
    keep_only(command, KEPT_ENV);
}

/// Clears the environment of `command` (ssh, or git running ssh) but for [`SSH_ENV`].
pub fn ssh_env(command: &mut Command) {
    keep_only(command, SSH_ENV);
}

fn keep_only(command: &mut Command, kept: &[&str]) {
    command.env_clear();
    for name in kept {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

/// An ssh host: `ssh <destination> context-pilot …`, commits sent with `git push` over the
/// same kind of connection to `context-pilot receive-pack`, which keeps the host's clone.
#[derive(Debug, Clone)]
pub struct SshPlace {
    name: String,
    destination: String,
    config: Option<PathBuf>,
}

impl SshPlace {
    /// The host `name`, reached as `destination`; the ssh configuration is the person's own,
    /// or the file [`SSH_CONFIG_ENV`] names.
    pub fn new(name: &str, destination: &str) -> Self {
        Self {
            name: name.to_owned(),
            destination: destination.to_owned(),
            config: std::env::var_os(SSH_CONFIG_ENV)
                .filter(|c| !c.is_empty())
                .map(PathBuf::from),
        }
    }

    /// The host `name`, reached as `destination` with the ssh configuration file `config`
    /// (`ssh -F`).
    pub fn with_config(name: &str, destination: &str, config: PathBuf) -> Self {
        Self {
            name: name.to_owned(),
            destination: destination.to_owned(),
            config: Some(config),
        }
    }

    /// The words of the ssh command, without the destination.
    fn ssh_words(&self) -> Vec<String> {
        let mut words = vec!["ssh".to_owned()];
        if let Some(config) = &self.config {
            words.push("-F".into());
            words.push(config.display().to_string());
        }
        words.extend(SSH_OPTIONS.iter().map(|&w| w.to_owned()));
        words
    }

    /// The git URL of its clone of project `key`.
    fn url(&self, key: &str) -> String {
        if self.destination.starts_with("ssh://") {
            format!("{}/{key}", self.destination.trim_end_matches('/'))
        } else {
            format!("{}:{key}", self.destination)
        }
    }

    /// Runs `git ARGS` in `repo` (a push or a fetch, `what`) over this host's ssh, with the
    /// environment ssh may have; a failure is told as ssh's when it is one.
    fn git_over_ssh(&self, repo: &Path, what: &str, args: &[&str]) -> Result<(), RemoteError> {
        let ssh = self
            .ssh_words()
            .iter()
            .map(|w| cp_base::shell_word(w))
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = Command::new("git");
        ssh_env(&mut command);
        let out = command
            .current_dir(repo)
            .env("GIT_SSH_COMMAND", ssh)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| RemoteError::Start {
                what: format!("git {what}"),
                source,
            })?;
        if out.status.success() {
            return Ok(());
        }
        let detail = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        Err(classify(&self.name, &detail).unwrap_or(RemoteError::Send {
            host: self.name.clone(),
            detail,
        }))
    }
}

impl Place for SshPlace {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&self, repo: &Path, key: &str, commit: &str, refname: &str) -> Result<(), RemoteError> {
        self.git_over_ssh(
            repo,
            "push",
            &[
                "push",
                "--quiet",
                "--no-verify",
                "--receive-pack=context-pilot receive-pack",
                &self.url(key),
                &format!("+{commit}:{refname}"),
            ],
        )
    }

    fn fetch(&self, repo: &Path, key: &str, refname: &str) -> Result<(), RemoteError> {
        self.git_over_ssh(
            repo,
            "fetch",
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--upload-pack=context-pilot upload-pack",
                &self.url(key),
                refname,
            ],
        )
    }

    fn start(&self, args: &[&str]) -> Result<Job, RemoteError> {
        let words = self.ssh_words();
        let mut command = Command::new(&words[0]);
        ssh_env(&mut command);
        command.args(&words[1..]).arg("--").arg(&self.destination);
        command.arg("context-pilot");
        for arg in args {
            command.arg(cp_base::shell_word(arg));
        }
        Job::spawn(&self.name, command)
    }

    fn answers(&self, within: Duration) -> bool {
        let words = self.ssh_words();
        let mut command = Command::new(&words[0]);
        ssh_env(&mut command);
        // ssh keeps the first value it is given for an option: this one, not SSH_OPTIONS'.
        let seconds = within.as_secs().clamp(1, 10);
        command
            .args(["-o", &format!("ConnectTimeout={seconds}")])
            .args(&words[1..])
            .arg("--")
            .arg(&self.destination)
            .arg("true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

/// What ssh's or the remote shell's words on standard error say went wrong, when they say.
pub(crate) fn classify(host: &str, stderr: &str) -> Option<RemoteError> {
    let host = host.to_owned();
    // The host's own `context-pilot` said it (its name for itself may differ from ours).
    if stderr.contains(" lacks git on its PATH") {
        return Some(RemoteError::NoGit {
            host,
            detail: "`git` is not found".into(),
        });
    }
    if stderr.contains("context-pilot: not found")
        || stderr.contains("context-pilot: command not found")
        || stderr.contains("context-pilot: No such file")
    {
        return Some(RemoteError::NoContextPilot { host });
    }
    // ssh's line that holds `needle` (git adds lines of its own after it).
    let line_of = |needle: &str| {
        stderr
            .lines()
            .find(|l| l.contains(needle))
            .map(|l| l.trim().trim_end_matches('.').to_owned())
    };
    if let Some(detail) = line_of("Host key verification failed") {
        // The line before says why: no key known, or another one.
        let why = stderr
            .lines()
            .take_while(|l| !l.contains("Host key verification failed"))
            .filter(|l| !l.trim().is_empty())
            .last()
            .map(|l| format!("{}: ", l.trim().trim_end_matches('.')))
            .unwrap_or_default();
        return Some(RemoteError::HostKeyUnknown {
            host,
            detail: format!("{why}{detail}"),
        });
    }
    // ssh's refusal names the methods it tried, `Permission denied (publickey,password)`; a
    // file the host's `context-pilot` cannot write says `Permission denied (os error 13)`.
    if let Some(line) = stderr.lines().find(|l| is_login_refusal(l)) {
        let detail = line.trim().trim_end_matches('.').to_owned();
        return Some(RemoteError::LoginRefused { host, detail });
    }
    let ssh_failed = [
        "Could not resolve hostname",
        "Connection refused",
        "Connection timed out",
        "No route to host",
        "Connection closed",
        "Network is unreachable",
        "timed out",
    ];
    if ssh_failed.iter().any(|s| stderr.contains(s)) {
        return Some(RemoteError::NoAnswer {
            host,
            detail: stderr.trim().to_owned(),
        });
    }
    None
}

/// Whether `line` is ssh's refusal of the login: `Permission denied (` and the names of the
/// methods it tried (lower-case words, `-`, `,`), then `)`.
fn is_login_refusal(line: &str) -> bool {
    let Some((_, rest)) = line.split_once("Permission denied (") else {
        return false;
    };
    rest.split_once(')').is_some_and(|(methods, _)| {
        !methods.is_empty()
            && methods
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b',')
    })
}

/// This machine: its clone of the project is under this user's data folder, as a host's is.
#[derive(Debug, Clone)]
pub struct LocalPlace {
    program: PathBuf,
}

impl LocalPlace {
    /// Runs `program` (the `context-pilot` binary).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }
}

impl Place for LocalPlace {
    fn name(&self) -> &'static str {
        "local"
    }

    fn send(&self, repo: &Path, key: &str, commit: &str, refname: &str) -> Result<(), RemoteError> {
        let clone = prepare_clone(key)?;
        let mut command = Command::new("git");
        clean_env(&mut command);
        let out = command
            .current_dir(repo)
            .args(["push", "--quiet", "--no-verify"])
            .arg(&clone)
            .arg(format!("+{commit}:{refname}"))
            .stdin(Stdio::null())
            .output()
            .map_err(|source| RemoteError::Start {
                what: "git push".into(),
                source,
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(RemoteError::Send {
                host: "local".into(),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    fn fetch(&self, repo: &Path, key: &str, refname: &str) -> Result<(), RemoteError> {
        let clone = prepare_clone(key)?;
        let mut command = Command::new("git");
        clean_env(&mut command);
        let out = command
            .current_dir(repo)
            .args(["fetch", "--quiet", "--no-tags"])
            .arg(&clone)
            .arg(refname)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| RemoteError::Start {
                what: "git fetch".into(),
                source,
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(RemoteError::Send {
                host: "local".into(),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    fn start(&self, args: &[&str]) -> Result<Job, RemoteError> {
        let mut command = Command::new(&self.program);
        clean_env(&mut command);
        command.args(args);
        Job::spawn("local", command)
    }

    fn answers(&self, _within: Duration) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_forwards_nothing_and_has_no_variable_a_host_could_take_for_its_own() {
        let joined = SSH_OPTIONS.join(" ");
        for option in [
            "ForwardAgent=no",
            "BatchMode=yes",
            "ClearAllForwardings=yes",
        ] {
            assert!(joined.contains(option), "{joined}");
        }
        assert!(!KEPT_ENV.iter().any(|v| v.contains("KEY")));
        assert_eq!(SSH_ENV, ["PATH", "SSH_AUTH_SOCK"]);

        let mut command = Command::new("ssh");
        ssh_env(&mut command);
        let names: Vec<_> = command
            .get_envs()
            .filter(|(_, value)| value.is_some())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| SSH_ENV.contains(&n.as_str())),
            "{names:?}"
        );
    }

    #[test]
    fn a_job_writing_more_errors_than_a_pipe_holds_still_gives_its_output() {
        // 1 MiB on standard error before the first line of output: read only at the end, the
        // job would stall on a full pipe and its line would never come.
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "head -c 1048576 /dev/zero | tr '\\0' x >&2; echo >&2; echo last error >&2; echo out",
        ]);
        let mut job = Job::spawn("local", command).unwrap();
        assert_eq!(job.next_line().as_deref(), Some("out"));
        assert_eq!(job.next_line(), None);
        let (status, errors) = job.finish();
        assert!(status.is_some_and(|s| s.success()));
        assert!(
            errors.ends_with("last error"),
            "{}",
            &errors[errors.len() - 40..]
        );
        assert!(errors.lines().count() <= ERROR_TAIL_LINES);
    }

    #[test]
    fn the_clone_url_follows_the_destination_form() {
        let alias = SshPlace::new("a", "build-1");
        assert_eq!(alias.url("p-1"), "build-1:p-1");
        let uri = SshPlace::new("b", "ssh://me@h:2222/");
        assert_eq!(uri.url("p-1"), "ssh://me@h:2222/p-1");
    }

    #[test]
    fn ssh_and_shell_failures_are_told_apart() {
        assert!(matches!(
            classify(
                "a",
                "ssh: connect to host 10.0.0.1 port 22: Connection refused"
            ),
            Some(RemoteError::NoAnswer { .. })
        ));
        assert!(matches!(
            classify("a", "sh: 1: context-pilot: not found"),
            Some(RemoteError::NoContextPilot { .. })
        ));
        assert!(matches!(
            classify(
                "a",
                "context-pilot: host vm lacks git on its PATH (for non-interactive ssh logins): \
                 `git` is not found; install git there\nfatal: Could not read from remote"
            ),
            Some(RemoteError::NoGit { host, .. }) if host == "a"
        ));
        assert!(matches!(
            classify(
                "a",
                "me@10.0.0.1: Permission denied (publickey).\nfatal: Could not read from remote"
            ),
            Some(RemoteError::LoginRefused { detail, .. })
                if detail == "me@10.0.0.1: Permission denied (publickey)"
        ));
        // The host's own `context-pilot` failing on a folder is no refusal of the login.
        let unwritable = "context-pilot: cannot make /home/me/.local/share/context-pilot/remote: \
                          Permission denied (os error 13)\nfatal: Could not read from remote \
                          repository.";
        assert!(
            classify("a", unwritable).is_none(),
            "{:?}",
            classify("a", unwritable)
        );
        assert!(matches!(
            classify(
                "a",
                "me@h: Permission denied (publickey,gssapi-keyex,keyboard-interactive)."
            ),
            Some(RemoteError::LoginRefused { .. })
        ));
        assert!(matches!(
            classify("a", "No ED25519 host key is known for [h]:22.\nHost key verification failed.\n"),
            Some(RemoteError::HostKeyUnknown { detail, .. })
                if detail == "No ED25519 host key is known for [h]:22: Host key verification failed"
        ));
        assert!(classify("a", "fatal: something else").is_none());
    }
}
