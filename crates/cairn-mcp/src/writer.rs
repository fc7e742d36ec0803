//! The writer: one thread owns the gatekeeper and takes every write in turn, so that requests
//! arriving together are appended in the order the ledger takes them, and a slow compaction
//! holds back other writes but no read (reads take snapshots on other threads).

use cairn::gate::Gatekeeper;
use cairn::Ledger;
use std::sync::{mpsc, Arc};

type Job = Box<dyn FnOnce(&Ledger, &Gatekeeper) + Send>;

/// A handle on the writer thread.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer thread over `ledger`, judging with `gate`.
    pub fn start(ledger: Arc<Ledger>, gate: Gatekeeper) -> std::io::Result<Writer> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("cairn-writer".into())
            .spawn(move || {
                for job in queue {
                    job(&ledger, &gate);
                }
            })?;
        Ok(Writer { jobs })
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
