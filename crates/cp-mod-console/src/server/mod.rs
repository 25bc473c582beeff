//! The console server: one process per project that owns the PTYs, so consoles outlive the
//! host that started them.

mod console;
mod log;
mod options;
mod prune;
mod pty;
mod reaper;
mod spawn;
mod tail;

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::BufReader;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine;
use uuid::Uuid;

use self::console::Console;
pub use self::log::{DEFAULT_LOG_HEAD_BYTES, DEFAULT_LOG_TAIL_BYTES, LogLimits};
pub use self::options::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CONSOLES,
    DEFAULT_TAIL_BYTES, MAX_CONSOLES_ENV, ServerOptions,
};
pub use self::prune::{DEFAULT_LOGS_MAX_AGE, DEFAULT_LOGS_MAX_BYTES};
use self::pty::Ptys;
use self::reaper::Reaper;
use crate::console_info::KillCause;
use crate::paths::RunPaths;
use crate::protocol::{PROTOCOL_VERSION, Request, Response, read_line, write_line};
use crate::{ConsoleError, meta, sys};

/// How often the accept loop checks for shutdown.
const ACCEPT_POLL: Duration = Duration::from_millis(200);
/// How long a finished console stays in memory after it ended.
const KEEP_FINISHED_MS: u64 = 60_000;
/// How long a refused client may take to send its hello before it is dropped.
const REFUSE_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// How often a running server prunes the logs of finished consoles.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// How long a starting server waits for an exiting predecessor to release the lock.
const LOCK_WAIT: Duration = Duration::from_secs(3);

struct Activity {
    connections: usize,
    shutting_down: bool,
}

struct Server {
    paths: RunPaths,
    opts: ServerOptions,
    instance: Uuid,
    consoles: Mutex<HashMap<Uuid, Arc<Console>>>,
    activity: Mutex<Activity>,
    reaper: Reaper,
    /// The PTY the next spawn takes.
    ptys: Ptys,
    stop_requested: AtomicBool,
    /// Held while a spawn checks the console limit and starts, so racing spawns cannot
    /// both take the last place.
    spawn_gate: Mutex<()>,
}

/// Runs the console server for `opts.project_root` until it has been idle for
/// `opts.idle_timeout` or a client asks it to shut down.
///
/// Returns [`ConsoleError::AlreadyRunning`] when another server owns the project.
pub fn run_server(opts: ServerOptions) -> Result<(), ConsoleError> {
    let root = fs::canonicalize(&opts.project_root).map_err(ConsoleError::io(
        "opening the project root",
        &opts.project_root,
    ))?;
    let paths = RunPaths::new(&root);
    paths.create_dirs()?;
    let lock_path = paths.server_lock();
    let lock = RunPaths::private_file(&lock_path, false)
        .map_err(ConsoleError::io("opening the server lock", &lock_path))?;
    if !lock_with_patience(&lock).map_err(ConsoleError::io("locking", &lock_path))? {
        return Err(ConsoleError::AlreadyRunning { root });
    }
    // Logs and state of older versions may be world-readable: make them private first.
    cp_base::private::secure_private_dir(paths.run_dir()).map_err(ConsoleError::io(
        "restricting the run directory",
        paths.run_dir(),
    ))?;
    sys::become_subreaper();
    sys::cloexec_inherited_fds();
    let instance = Uuid::new_v4();
    meta::mark_orphans_lost(&paths, instance);
    prune::prune_logs(
        &paths,
        &std::collections::HashSet::new(),
        opts.logs_max_age,
        opts.logs_max_bytes,
    );

    // We hold the lock, so any socket file left here belongs to a dead server.
    let _ = fs::remove_file(paths.socket());
    let listener = UnixListener::bind(paths.socket()).map_err(ConsoleError::io(
        "binding the console socket",
        paths.socket(),
    ))?;
    fs::set_permissions(paths.socket(), fs::Permissions::from_mode(0o600)).map_err(
        ConsoleError::io("restricting the console socket", paths.socket()),
    )?;
    write_pid_file(&paths)?;
    tracing::info!(
        "console server {} for {} listening on {}",
        std::process::id(),
        root.display(),
        paths.socket().display()
    );

    let server = Arc::new(Server {
        paths: paths.clone(),
        opts,
        instance,
        consoles: Mutex::new(HashMap::new()),
        activity: Mutex::new(Activity {
            connections: 0,
            shutting_down: false,
        }),
        reaper: Reaper::default(),
        ptys: Ptys::default(),
        stop_requested: AtomicBool::new(false),
        spawn_gate: Mutex::new(()),
    });
    let s = Arc::clone(&server);
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || s.reaper.run())
        .map_err(ConsoleError::io(
            "starting the reaper thread",
            paths.run_dir(),
        ))?;
    let s = Arc::clone(&server);
    std::thread::Builder::new()
        .name("idle-watch".into())
        .spawn(move || s.watch_idle())
        .map_err(ConsoleError::io(
            "starting the idle watchdog",
            paths.run_dir(),
        ))?;

    accept_loop(&server, &listener);
    // Still holding the lock: no successor can have bound the socket yet.
    let _ = fs::remove_file(paths.socket());
    let _ = fs::remove_file(paths.pid_file());
    tracing::info!("console server {} exiting", std::process::id());
    drop(lock);
    Ok(())
}

/// Accepts clients, one thread each, until the server is shutting down.
fn accept_loop(server: &Arc<Server>, listener: &UnixListener) {
    // Poll rather than block in accept: the loop must notice a shutdown even when nobody can
    // connect any more (the socket file was removed with the project, say).
    loop {
        if server.activity().shutting_down {
            break;
        }
        match sys::wait_readable(listener.as_raw_fd(), ACCEPT_POLL) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!("polling the console socket: {e}");
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        {
            let mut act = server.activity();
            if act.shutting_down {
                break;
            }
            if act.connections >= server.opts.max_clients {
                drop(act);
                refuse(
                    stream,
                    &format!(
                        "at its limit of {} connected clients; retry \
                         when some have disconnected (or raise CP_CONSOLE_MAX_CLIENTS)",
                        server.opts.max_clients
                    ),
                );
                continue;
            }
            act.connections += 1;
        }
        let spare = stream.try_clone();
        let s = Arc::clone(server);
        let spawned = std::thread::Builder::new()
            .name("client".into())
            .spawn(move || {
                s.serve(stream);
                s.activity().connections -= 1;
            });
        if let Err(e) = spawned {
            server.activity().connections -= 1;
            if let Ok(stream) = spare {
                refuse(
                    stream,
                    &format!("cannot start a thread for this client ({e}); retry later"),
                );
            }
        }
    }
}

/// Answers a client the server cannot serve: reads its hello (so the client is not cut off
/// mid-write) and answers with an error that says why.
fn refuse(stream: UnixStream, why: &str) {
    tracing::warn!("refusing a client: {why}");
    let _ = stream.set_read_timeout(Some(REFUSE_READ_TIMEOUT));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let _ = read_line::<Request>(&mut BufReader::new(read_half));
    let mut writer = stream;
    let _ = write_line(
        &mut writer,
        &Response::from_error(&ConsoleError::Server(why.to_owned())),
    );
}

/// Tries the lock for a while: a predecessor may be in the middle of exiting.
fn lock_with_patience(lock: &File) -> std::io::Result<bool> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        if sys::try_lock_exclusive(lock)? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn write_pid_file(paths: &RunPaths) -> Result<(), ConsoleError> {
    let path = paths.pid_file();
    let tmp = path.with_extension("pid.tmp");
    RunPaths::private_file(&tmp, false)
        .and_then(|mut f| {
            f.set_len(0)?;
            std::io::Write::write_all(&mut f, format!("{}\n", std::process::id()).as_bytes())
        })
        .and_then(|()| fs::rename(&tmp, &path))
        .map_err(ConsoleError::io("writing the pid file", &path))
}

impl Server {
    fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn consoles(&self) -> MutexGuard<'_, HashMap<Uuid, Arc<Console>>> {
        self.consoles.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Exits the accept loop once nothing has happened for the idle timeout (or at once
    /// after a shutdown request).
    fn watch_idle(&self) {
        let tick = (self.opts.idle_timeout / 10)
            .clamp(Duration::from_millis(10), Duration::from_millis(250));
        let mut idle_since: Option<Instant> = None;
        let mut last_prune = Instant::now();
        loop {
            std::thread::sleep(tick);
            self.forget_finished();
            if last_prune.elapsed() >= PRUNE_EVERY {
                last_prune = Instant::now();
                let live = self.consoles().keys().copied().collect();
                prune::prune_logs(
                    &self.paths,
                    &live,
                    self.opts.logs_max_age,
                    self.opts.logs_max_bytes,
                );
            }
            let running = self.consoles().values().any(|s| s.is_running());
            let mut act = self.activity();
            let stop = self.stop_requested.load(Ordering::SeqCst);
            if !stop && (running || act.connections > 0) {
                idle_since = None;
                continue;
            }
            let since = *idle_since.get_or_insert_with(Instant::now);
            if stop || since.elapsed() >= self.opts.idle_timeout {
                act.shutting_down = true;
                return;
            }
        }
    }

    /// Drops finished consoles from memory a while after they end, so a long-lived server
    /// does not keep a tail per finished run. They stay on disk and reload on demand.
    fn forget_finished(&self) {
        let cutoff = cp_base::now_ms().saturating_sub(KEEP_FINISHED_MS);
        self.consoles().retain(|_, s| {
            let info = s.info();
            info.status.is_running() || info.ended_at_ms.is_some_and(|end| end > cutoff)
        });
    }

    /// Ends every running console labelled `label`, each in a thread of its own, so the
    /// spawn that replaces them does not wait out a grace period (its command can wait for
    /// them itself).
    fn end_same_label(&self, label: &str) {
        let replaced: Vec<Arc<Console>> = self
            .consoles()
            .values()
            .filter(|c| c.is_running() && c.info().label.as_deref() == Some(label))
            .cloned()
            .collect();
        for console in replaced {
            let spawned = std::thread::Builder::new().name("replace".into()).spawn({
                let console = Arc::clone(&console);
                move || {
                    console.kill(KillCause::Request);
                }
            });
            if let Err(e) = spawned {
                tracing::warn!("no thread to end a replaced console ({e}); ending it here");
                console.kill(KillCause::Request);
            }
        }
    }

    /// Serves one client connection until it closes. Every request that arrived whole is
    /// carried out, answered or not: a client may hang up without reading its answers
    /// ([`ConsoleClient::spawn_unanswered`](crate::ConsoleClient::spawn_unanswered)), and what
    /// it sent stays readable on this side after it has gone.
    fn serve(&self, stream: UnixStream) {
        let Ok(read_half) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(read_half);
        let mut writer = stream;
        match read_line::<Request>(&mut reader) {
            Ok(Some(Request::Hello { version })) => {
                let hello = Response::Hello {
                    version: PROTOCOL_VERSION,
                    pid: std::process::id(),
                };
                // An unanswered hello is a client that hung up: its requests may follow.
                let _ = write_line(&mut writer, &hello);
                if version != PROTOCOL_VERSION {
                    tracing::warn!(
                        "a client of protocol {version} (this server's is {PROTOCOL_VERSION}): \
                         not served"
                    );
                    return;
                }
            }
            Ok(Some(_)) => {
                let _ = write_line(
                    &mut writer,
                    &Response::from_error(&ConsoleError::Protocol(
                        "the first message must be `hello` with the protocol version".into(),
                    )),
                );
                return;
            }
            Ok(None) | Err(_) => return,
        }
        loop {
            let request = match read_line::<Request>(&mut reader) {
                Ok(Some(r)) => r,
                Ok(None) => return,
                Err(e) => {
                    let _ = write_line(&mut writer, &Response::from_error(&e));
                    return;
                }
            };
            let shutdown = matches!(request, Request::Shutdown);
            let mut started = None;
            let response = self
                .handle(request, &mut started)
                .unwrap_or_else(|e| Response::from_error(&e));
            let answered = write_line(&mut writer, &response).is_ok();
            if !answered && let Response::Error { error } = &response {
                tracing::warn!("a request of a client that hung up failed: {error:?}");
            }
            // A new console's record is written once its spawn is answered: the client goes
            // on (to wait for it, say) while it is written.
            if let Some(console) = started {
                console.save_record();
                self.ptys.open_ahead();
            }
            // A client that hung up may have sent more: the next read takes it, or ends.
            if shutdown {
                return;
            }
        }
    }

    /// Finds a console in memory, or loads a finished one from disk.
    fn console(&self, id: Uuid) -> Result<Arc<Console>, ConsoleError> {
        if let Some(s) = self.consoles().get(&id) {
            return Ok(Arc::clone(s));
        }
        let info = meta::read_meta(&self.paths, id)?
            .ok_or_else(|| ConsoleError::UnknownConsole(id.to_string()))?;
        let loaded = Console::load_finished(&self.paths, info, self.opts.tail_bytes);
        Ok(Arc::clone(self.consoles().entry(id).or_insert(loaded)))
    }

    /// Answers `request`; a console it started is put in `started`.
    fn handle(
        &self,
        request: Request,
        started: &mut Option<Arc<Console>>,
    ) -> Result<Response, ConsoleError> {
        Ok(match request {
            Request::Hello { .. } => Response::Hello {
                version: PROTOCOL_VERSION,
                pid: std::process::id(),
            },
            Request::Spawn { spec } => {
                let _gate = self
                    .spawn_gate
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if spec.exclusive {
                    self.end_same_label(spec.label.as_deref().unwrap_or_default());
                }
                let running = self.consoles().values().filter(|s| s.is_running()).count();
                if running >= self.opts.max_consoles {
                    return Err(ConsoleError::Server(format!(
                        "at its limit of {} running consoles; `{}` was \
                         not started. Wait for a console to end or kill one (console_kill), \
                         then retry (or raise {MAX_CONSOLES_ENV})",
                        self.opts.max_consoles, spec.command
                    )));
                }
                let console = Console::start(
                    &self.paths,
                    &spec,
                    self.instance,
                    &self.reaper,
                    &self.ptys,
                    &self.opts,
                )?;
                let info = console.info();
                self.consoles().insert(info.id, Arc::clone(&console));
                *started = Some(console);
                Response::Console { info }
            }
            Request::List => {
                let mut consoles: Vec<_> = self.consoles().values().map(|s| s.info()).collect();
                for info in meta::list_metas(&self.paths) {
                    if !consoles.iter().any(|s| s.id == info.id) {
                        consoles.push(meta::orphaned_view(&self.paths, info));
                    }
                }
                consoles.sort_by_key(|i| (i.started_at_ms, i.id));
                Response::Consoles { consoles }
            }
            Request::Status { id } => Response::Console {
                info: self.console(id)?.info(),
            },
            Request::Send { id, data } => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.as_bytes())
                    .map_err(|e| {
                        ConsoleError::Protocol(format!("send: data is not base64: {e}"))
                    })?;
                self.console(id)?.send(&bytes)?;
                Response::Ok
            }
            Request::Resize { id, rows, cols } => {
                self.console(id)?.resize(rows, cols)?;
                Response::Ok
            }
            Request::Kill { id } => Response::Console {
                info: self.console(id)?.kill(KillCause::Request),
            },
            Request::Wait {
                id,
                condition,
                timeout,
            } => {
                let console = self.console(id)?;
                let met = console.wait(&condition, timeout)?;
                Response::Waited {
                    met,
                    info: console.info(),
                }
            }
            Request::Shutdown => {
                let running: Vec<_> = self
                    .consoles()
                    .values()
                    .filter(|s| s.is_running())
                    .cloned()
                    .collect();
                for s in running {
                    s.kill(KillCause::Shutdown);
                }
                self.stop_requested.store(true, Ordering::SeqCst);
                Response::Ok
            }
        })
    }
}
