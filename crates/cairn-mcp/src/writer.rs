//! The writer: one thread owns the gatekeeper and takes every write in turn, so that requests
//! arriving together are appended in the order the ledger takes them, and a slow compaction
//! holds back other writes but no read (reads take snapshots on other threads).

use cairn::gate::Gatekeeper;
use cairn::Ledger;
use std::sync::{mpsc, Arc, Mutex};

type Job = Box<dyn FnOnce(&Ledger, &Gatekeeper) + Send>;

/// A handle on the writer thread.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

/// Waits for the writer thread to end, and with it the thread's hold on the ledger: what a
/// server does before it exits, so that the ledger is closed cleanly (redb marks a file it
/// was not closed on as needing recovery).
pub struct Closing {
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl Closing {
    /// Waits until every handle on the writer has been dropped and the thread has finished
    /// its last job and let go of the ledger.
    pub fn wait(self) {
        let handle = self.thread.lock().ok().and_then(|mut h| h.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Writer {
    /// Starts the writer thread over `ledger`, judging with `gate`.
    pub fn start(ledger: Arc<Ledger>, gate: Gatekeeper) -> std::io::Result<Writer> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let handle = std::thread::Builder::new()
            .name("cairn-writer".into())
            .spawn(move || {
                for job in queue {
                    job(&ledger, &gate);
                }
            })?;
        Ok(Writer {
            jobs,
            thread: Arc::new(Mutex::new(Some(handle))),
        })
    }

    /// A handle that waits for the thread to end once every `Writer` is dropped.
    pub fn closing(&self) -> Closing {
        Closing {
            thread: self.thread.clone(),
        }
    }

    /// Runs `f` on the writer thread and waits for its answer; `None` if the writer stopped.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Ledger, &Gatekeeper) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |ledger, gate| {
            let _ = tx.send(f(ledger, gate));
        });
        self.jobs.send(job).ok()?;
        rx.await.ok()
    }
}
