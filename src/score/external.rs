//! A scorer that runs an external command speaking JSON Lines: for each request cairn writes
//! `{"claim":..,"source":..}` on the command's stdin and reads one line
//! `{"entailment":..,"contradiction":..,"similarity":..}` from its stdout.

use super::{ScoreError, ScoreProblem, Scorer, Scores};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// An external command scorer, started once and fed one request per line.
pub struct External {
    id: String,
    command: String,
    timeout: Duration,
    inner: Mutex<Option<Running>>,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
}

impl Drop for External {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.inner.lock() {
            if let Some(mut r) = guard.take() {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
        }
    }
}

impl External {
    /// A scorer that runs `command` through `sh -c`, waiting at most `timeout` per answer.
    pub fn new(command: &str, timeout: Duration) -> External {
        External {
            id: format!("external:{command}"),
            command: command.to_string(),
            timeout,
            inner: Mutex::new(None),
        }
    }

    fn fail(&self, problem: ScoreProblem) -> ScoreError {
        ScoreError {
            scorer: self.id.clone(),
            problem,
        }
    }

    fn start(&self) -> Result<Running, ScoreError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                self.fail(ScoreProblem::Start {
                    command: self.command.clone(),
                    reason: e.to_string(),
                })
            })?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => return Err(self.fail(ScoreProblem::NotPiped)),
        };
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Running {
            child,
            stdin,
            lines: rx,
        })
    }

    fn parse(&self, line: &str) -> Result<Scores, ScoreError> {
        let v: Value = serde_json::from_str(line).map_err(|e| {
            self.fail(ScoreProblem::NotJson {
                answer: line.to_string(),
                reason: e.to_string(),
            })
        })?;
        let field = |name: &'static str| -> Result<f64, ScoreError> {
            v.get(name)
                .and_then(Value::as_f64)
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    self.fail(ScoreProblem::Field {
                        answer: line.to_string(),
                        field: name,
                    })
                })
        };
        Ok(Scores {
            entailment: field("entailment")?,
            contradiction: field("contradiction")?,
            similarity: field("similarity")?,
        })
    }
}

impl Scorer for External {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| self.fail(ScoreProblem::Poisoned))?;
        if guard.is_none() {
            *guard = Some(self.start()?);
        }
        let Some(r) = guard.as_mut() else {
            return Err(self.fail(ScoreProblem::NotRunning));
        };
        let request = json!({"claim": claim, "source": source}).to_string();
        let sent = writeln!(r.stdin, "{request}").and_then(|_| r.stdin.flush());
        let answer = match sent {
            // It may have answered, then exited, before reading: report what it said.
            Err(e) => match r.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(Ok(line)) => self.parse(&line),
                _ => Err(self.fail(ScoreProblem::StoppedReading {
                    reason: e.to_string(),
                })),
            },
            Ok(()) => match r.lines.recv_timeout(self.timeout) {
                Ok(Ok(line)) => self.parse(&line),
                Ok(Err(e)) => Err(self.fail(ScoreProblem::Read {
                    reason: e.to_string(),
                })),
                Err(RecvTimeoutError::Timeout) => Err(self.fail(ScoreProblem::Timeout {
                    ms: self.timeout.as_millis(),
                })),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = r.child.try_wait().ok().flatten();
                    Err(self.fail(ScoreProblem::Exited {
                        status: status.map(|s| s.to_string()),
                    }))
                }
            },
        };
        if answer.is_err() {
            if let Some(mut dead) = guard.take() {
                let _ = dead.child.kill();
                let _ = dead.child.wait();
            }
        }
        answer
    }
}
