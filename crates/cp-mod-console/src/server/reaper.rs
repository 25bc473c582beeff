//! Reaps every child of the server: the leader of each console's process group (reporting
//! its exit to its console) and the orphaned grandchildren the server adopts as a subreaper.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use crate::sys::{self, RawExit};

/// What runs on the reaper's thread the moment a child's exit is known, once its console
/// set it (before, the exit reaches the console's supervisor only).
pub(super) type AtOnce = Arc<OnceLock<Box<dyn Fn(RawExit) + Send + Sync>>>;

#[derive(Default)]
struct Registry {
    waiting: HashMap<u32, (Sender<RawExit>, AtOnce)>,
    /// Bumped on each spawn, so the reaper never sleeps through a new child.
    generation: u64,
}

/// The server's one reaper.
#[derive(Default)]
pub(super) struct Reaper {
    registry: Mutex<Registry>,
    spawned: Condvar,
}

impl Reaper {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `spawn` (which returns the new child's pid) while holding the registry, so the
    /// reaper cannot reap the child before its exit channel is registered.
    ///
    /// The exit goes to the returned channel, and first to what the caller sets in the
    /// returned [`AtOnce`], if it is set by then.
    pub(super) fn spawn_tracked<T, E>(
        &self,
        spawn: impl FnOnce() -> Result<(T, u32), E>,
    ) -> Result<(T, u32, Receiver<RawExit>, AtOnce), E> {
        let mut reg = self.lock();
        let (value, pid) = spawn()?;
        let (tx, rx) = mpsc::channel();
        let at_once = AtOnce::default();
        reg.waiting.insert(pid, (tx, Arc::clone(&at_once)));
        reg.generation += 1;
        drop(reg);
        self.spawned.notify_all();
        Ok((value, pid, rx, at_once))
    }

    /// The reaper loop; never returns.
    pub(super) fn run(&self) -> ! {
        loop {
            let generation = self.lock().generation;
            match sys::peek_exited_child() {
                Ok(Some(pid)) => {
                    // Take the registry before reaping: a spawn in progress finishes
                    // registering first, and std's own reaping of a failed exec wins.
                    let mut reg = self.lock();
                    let exit = sys::reap(pid);
                    let watcher = reg.waiting.remove(&pid);
                    drop(reg);
                    if let (Some((tx, at_once)), Some(exit)) = (watcher, exit) {
                        if let Some(hear) = at_once.get() {
                            hear(exit);
                        }
                        let _ = tx.send(exit);
                    }
                }
                Ok(None) => {
                    let reg = self.lock();
                    if reg.generation == generation {
                        let _ = self
                            .spawned
                            .wait_timeout(reg, Duration::from_secs(1))
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                }
                Err(e) => {
                    tracing::warn!("waitid failed: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
}
