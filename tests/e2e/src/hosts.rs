//! Hosts of the tests' own, reached with real OpenSSH: each [`TestHost`] is a network
//! namespace joined to this machine by a veth pair (addresses in `10.64.0.0/10`, picked from
//! the process id so that runs side by side never meet), running Debian's `/usr/sbin/sshd` as
//! an ordinary user on a port of its own, with a host key and a client key made for the test.
//! Each host's user has a HOME of its own (sshd's `SetEnv`), with `bin/` first on its `PATH`;
//! the machine's git and the built `context-pilot` are seen there (the same filesystem).
//!
//! Teardown never depends on the test ending well: a guard process (its own session, so a
//! signal to the test's process group spares it) waits for its standard input to close,
//! which happens when the host is dropped or when the test process dies, even by SIGKILL, and
//! then kills every process in the namespace and deletes the namespace and its veth.
//!
//! Needs root (for `ip netns`), `ip`, `ssh`, `ssh-keygen`, `/usr/sbin/sshd` and `setpriv`;
//! [`TestHost::missing`] says what is not there (`scripts/test.sh` installs them).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::{binary_path, eventually_with};

/// The user sshd runs as when the tests run as root (`scripts/test.sh` makes it).
pub const HOST_USER: &str = "cp-tests";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A host of the test's own: a network namespace with sshd, torn down on drop.
pub struct TestHost {
    alias: String,
    netns: String,
    address: String,
    near: String,
    port: u16,
    user: String,
    dir: tempfile::TempDir,
    keys: tempfile::TempDir,
    sshd: Option<Child>,
    guard: Option<(Child, ChildStdin)>,
}

impl TestHost {
    /// What this machine lacks to start test hosts, or `None` when nothing is missing.
    pub fn missing() -> Option<String> {
        if !is_root() {
            return Some("not root: `ip netns add` needs it".into());
        }
        for tool in ["ip", "ssh", "ssh-keygen", "setpriv", "git"] {
            if !on_path(tool) {
                return Some(format!("`{tool}` is not installed"));
            }
        }
        if !Path::new("/usr/sbin/sshd").exists() {
            return Some("Debian's openssh-server (/usr/sbin/sshd) is not installed".into());
        }
        if user_ids(HOST_USER).is_none() {
            return Some(format!(
                "the user {HOST_USER} does not exist (scripts/test.sh makes it)"
            ));
        }
        None
    }

    /// Whether a test may run: `false` (the test returns) when something is missing outside
    /// CI; under `CI` a missing tool fails the test.
    ///
    /// # Panics
    /// Under `CI`, when something is missing.
    pub fn can_start() -> bool {
        let Some(missing) = Self::missing() else {
            return true;
        };
        assert!(
            std::env::var_os("CI").is_none(),
            "cannot start test hosts: {missing}"
        );
        eprintln!("skipped: cannot start test hosts: {missing}");
        false
    }

    /// Starts a host named `alias` (the name its ssh configuration entry gets) and waits
    /// until its sshd accepts a login.
    ///
    /// # Panics
    /// When any step fails: the test cannot go on without its host.
    pub fn start(alias: &str) -> Self {
        Self::start_with(alias, true)
    }

    /// [`start`](Self::start), its user's `PATH` being its `bin/` only: a host where the
    /// machine's programs (git, the toolchains) are not installed, only `context-pilot`.
    ///
    /// # Panics
    /// When any step fails.
    pub fn start_bare(alias: &str) -> Self {
        Self::start_with(alias, false)
    }

    fn start_with(alias: &str, system_path: bool) -> Self {
        let n =
            (std::process::id().wrapping_mul(8) + NEXT.fetch_add(1, Ordering::Relaxed)) % (1 << 20);
        let netns = format!("cp-host-{n:05x}");
        let outside = format!("cpv{n:05x}o");
        let inside = format!("cpv{n:05x}i");
        let (b, c, d) = (64 + (n >> 14), (n >> 6) & 0xff, (n & 0x3f) << 2);
        let near = format!("10.{b}.{c}.{}", d + 1);
        let address = format!("10.{b}.{c}.{}", d + 2);
        let port = u16::try_from(22000 + n % 20000).unwrap_or(22000);
        let (uid, gid) =
            user_ids(HOST_USER).unwrap_or_else(|| panic!("the user {HOST_USER} does not exist"));

        let guard = make_network(&netns, &outside, &inside, &near, &address);

        let dir = tempfile::Builder::new()
            .prefix(&format!("cp-host-{alias}-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let keys = tempfile::Builder::new()
            .prefix("cp-host-keys-")
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("bin")).unwrap_or_else(|e| panic!("mkdir: {e}"));
        let host_key = dir.path().join("host_key");
        let client_key = keys.path().join("client_key");
        keygen(&host_key);
        keygen(&client_key);
        let public = std::fs::read_to_string(client_key.with_extension("pub"))
            .unwrap_or_else(|e| panic!("read client key: {e}"));
        write(&dir.path().join("authorized_keys"), &public);
        let host_public = std::fs::read_to_string(host_key.with_extension("pub"))
            .unwrap_or_else(|e| panic!("read host key: {e}"));
        write(
            &keys.path().join("known_hosts"),
            &format!("[{address}]:{port} {host_public}"),
        );
        let home_text = home.display().to_string();
        let path = if system_path {
            format!("{home_text}/bin:/usr/local/bin:/usr/bin:/bin")
        } else {
            format!("{home_text}/bin")
        };
        let config = format!(
            "Port {port}\nListenAddress {address}\nHostKey {}\nAuthorizedKeysFile {}\n\
             PidFile none\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nAcceptEnv *\nPermitUserEnvironment no\n\
             SetEnv HOME={home_text} PATH={path}\n",
            host_key.display(),
            dir.path().join("authorized_keys").display(),
        );
        write(&dir.path().join("sshd_config"), &config);
        std::os::unix::fs::symlink(binary_path(), home.join("bin/context-pilot"))
            .unwrap_or_else(|e| panic!("link the binary: {e}"));
        run_ok(
            "chown",
            &[
                "-R",
                &format!("{uid}:{gid}"),
                &dir.path().display().to_string(),
            ],
        );
        let sshd = Command::new("ip")
            .args(["netns", "exec", &netns, "setpriv"])
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={gid}"))
            .args(["--init-groups", "/usr/sbin/sshd", "-D", "-e", "-f"])
            .arg(dir.path().join("sshd_config"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(keys.path().join("sshd.log"))
                    .map_or_else(|_| Stdio::null(), Stdio::from),
            )
            .spawn()
            .unwrap_or_else(|e| panic!("start sshd: {e}"));
        let host = Self {
            alias: alias.to_owned(),
            netns,
            address,
            near,
            port,
            user: HOST_USER.to_owned(),
            dir,
            keys,
            sshd: Some(sshd),
            guard: Some(guard),
        };
        eventually_with(
            "the host's sshd accepts a login",
            Duration::from_secs(20),
            || host.ssh(&["true"]).status.success(),
            || host.sshd_log(),
        );
        host
    }

    /// The name its ssh configuration entry has.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// Its address, reachable from this machine.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// This machine's address as the host reaches it (the near end of its veth).
    pub fn near(&self) -> &str {
        &self.near
    }

    /// The network namespace it lives in.
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// The HOME of its user.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The folder first on its user's `PATH` (`context-pilot` is linked there).
    pub fn bin(&self) -> PathBuf {
        self.home().join("bin")
    }

    /// Its ssh configuration entry (`Host <alias>` with its address, port, user, the test's
    /// key and its host key, checked strictly). It sends every variable (`SendEnv *`, and the
    /// host's sshd accepts them all), as a careless configuration might: what a run keeps
    /// from a host must not depend on the person's ssh configuration.
    pub fn ssh_config_entry(&self) -> String {
        format!(
            "Host {}\n  HostName {}\n  Port {}\n  User {}\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n  \
             ConnectTimeout 5\n  SendEnv *\n",
            self.alias,
            self.address,
            self.port,
            self.user,
            self.keys.path().join("client_key").display(),
            self.keys.path().join("known_hosts").display(),
        )
    }

    /// Runs `command` (words for the remote shell) on the host with a configuration of its
    /// own entry only, as a person logged in there: ssh gets only `PATH` from the test, so
    /// the entry's `SendEnv *` brings nothing of the test's environment to the host.
    ///
    /// # Panics
    /// When ssh cannot be started.
    pub fn ssh(&self, command: &[&str]) -> std::process::Output {
        let config = self.keys.path().join("ssh_config");
        if !config.exists() {
            write(&config, &self.ssh_config_entry());
        }
        Command::new("ssh")
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .arg("-F")
            .arg(&config)
            .args(["-o", "BatchMode=yes", &self.alias])
            .args(command)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run ssh: {e}"))
    }

    /// The processes running in its namespace other than its sshd: what a run left behind.
    pub fn leftovers(&self) -> Vec<String> {
        let sshd = self.sshd.as_ref().map(Child::id);
        let pids = Command::new("ip")
            .args(["netns", "pids", &self.netns])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        pids.split_whitespace()
            .filter(|pid| pid.parse::<u32>().ok() != sshd)
            .map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                format!(
                    "{pid}: {}",
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                )
            })
            .collect()
    }

    /// What its sshd logged.
    pub fn sshd_log(&self) -> String {
        std::fs::read_to_string(self.keys.path().join("sshd.log")).unwrap_or_default()
    }

    /// Takes its link down (`up == false`) or brings it back.
    pub fn set_link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        let inside = format!("cpv{}i", &self.netns["cp-host-".len()..]);
        run_ok("ip", &["-n", &self.netns, "link", "set", &inside, state]);
    }

    /// Kills its sshd and every process in its namespace: the host is gone.
    pub fn kill(&mut self) {
        kill_namespace(&self.netns);
        if let Some(mut sshd) = self.sshd.take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.kill();
        if let Some((mut guard, stdin)) = self.guard.take() {
            // Its input closes: it deletes the namespace and the veth, and ends.
            drop(stdin);
            let _ = guard.wait();
        }
    }
}

/// The namespace, its veth pair and their addresses (leftovers of a run with the same
/// numbers, a reused pid, go first), with the guard that tears them down started before.
fn make_network(
    netns: &str,
    outside: &str,
    inside: &str,
    near: &str,
    address: &str,
) -> (Child, ChildStdin) {
    let _ = run_quiet("ip", &["netns", "del", netns]);
    let _ = run_quiet("ip", &["link", "del", outside]);
    let guard = start_guard(netns, outside);
    for args in [
        vec!["netns", "add", netns],
        vec![
            "link", "add", outside, "type", "veth", "peer", "name", inside,
        ],
        vec!["link", "set", inside, "netns", netns],
        vec!["addr", "add", &format!("{near}/30"), "dev", outside],
        vec!["link", "set", outside, "up"],
        vec![
            "-n",
            netns,
            "addr",
            "add",
            &format!("{address}/30"),
            "dev",
            inside,
        ],
        vec!["-n", netns, "link", "set", inside, "up"],
        vec!["-n", netns, "link", "set", "lo", "up"],
    ] {
        run_ok("ip", &args);
    }

    guard
}

/// Writes an ssh configuration holding every host's entry into `dir` and returns its path.
///
/// # Panics
/// When the file cannot be written.
pub fn ssh_config(dir: &Path, hosts: &[&TestHost]) -> PathBuf {
    let mut text = String::new();
    for host in hosts {
        let _ = writeln!(text, "{}", host.ssh_config_entry());
    }
    let path = dir.join("ssh_config");
    write(&path, &text);
    path
}

/// The guard: in a session of its own, it waits for its input to close, then ends every
/// process of the namespace and deletes it and the veth.
fn start_guard(netns: &str, outside: &str) -> (Child, ChildStdin) {
    let script = format!(
        "read -r _ ; for p in $(ip netns pids {netns}); do kill -9 \"$p\"; done; \
         ip netns del {netns} 2>/dev/null; ip link del {outside} 2>/dev/null; exit 0"
    );
    let mut child = Command::new("setsid")
        .args(["sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start the teardown guard: {e}"));
    let stdin = child
        .stdin
        .take()
        .unwrap_or_else(|| panic!("the guard's input"));
    (child, stdin)
}

fn kill_namespace(netns: &str) {
    let pids = Command::new("ip")
        .args(["netns", "pids", netns])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for pid in pids.split_whitespace() {
        let _ = run_quiet("kill", &["-9", pid]);
    }
}

fn keygen(path: &Path) {
    run_ok(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "cp-test",
            "-f",
            &path.display().to_string(),
        ],
    );
}

fn write(path: &Path, text: &str) {
    let mut file =
        std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    file.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    let _ = std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600));
}

fn run_ok(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_quiet(program: &str, args: &[&str]) -> std::io::Result<std::process::ExitStatus> {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

fn user_ids(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&name) && fields.len() > 3)
            .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
            .flatten()
    })
}
