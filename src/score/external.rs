//! A scorer that runs an external command speaking JSON Lines: for each request cairn writes
//! `{"id":..,"claim":..,"source":..}` on the command's stdin and reads one line
//! `{"entailment":..,"contradiction":..,"similarity":..}` from its stdout, with the request's
//! `id` echoed (checked) or left out (answers then pair with requests in order).

use super::{ScoreError, ScoreProblem, Scorer, Scores};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// The longest answer line read: a scores object is well under 200 bytes.
const MAX_ANSWER: usize = 1 << 20;

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
    /// Requests sent so far: the next request's id is one more.
    requests: u64,
}

impl Drop for External {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.inner.lock() {
            if let Some(r) = guard.take() {
                r.stop();
            }
        }
    }
}

impl Running {
    /// Ends the command and every process it started (its process group), and reaps it.
    fn stop(mut self) {
        #[cfg(unix)]
        {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill")
                .args(["-KILL", "--", &group])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
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
        let mut command = Command::new("sh");
        // Its own process group, so a timeout ends the command and everything it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
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
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let read = (&mut reader)
                    .take(MAX_ANSWER as u64 + 1)
                    .read_until(b'\n', &mut buf);
                let line = match read {
                    Ok(0) => break,
                    Ok(_) if buf.len() > MAX_ANSWER => Err(std::io::Error::other(format!(
                        "an answer longer than {MAX_ANSWER} bytes"
                    ))),
                    Ok(_) => {
                        if buf.ends_with(b"\n") {
                            buf.pop();
                        }
                        String::from_utf8(buf).map_err(std::io::Error::other)
                    }
                    Err(e) => Err(e),
                };
                let stop = line.is_err();
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        Ok(Running {
            child,
            stdin,
            lines: rx,
            requests: 0,
        })
    }

    /// Reads the answer to request `id`. An answer that carries an `id` must carry this one;
    /// one without answers in order.
    fn parse(&self, line: &str, id: u64) -> Result<Scores, ScoreError> {
        let v: Value = serde_json::from_str(line).map_err(|e| {
            self.fail(ScoreProblem::NotJson {
                answer: line.to_string(),
                reason: e.to_string(),
            })
        })?;
        if let Some(got) = v.get("id") {
            if got.as_u64() != Some(id) {
                return Err(self.fail(ScoreProblem::WrongId {
                    answer: line.to_string(),
                    id,
                }));
            }
        }
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
        // A line waiting before any request was sent answers nothing: the command writes
        // more lines than it is asked for, and reading on would pair every later score with
        // the wrong claim.
        if let Ok(Ok(extra)) = r.lines.try_recv() {
            if let Some(dead) = guard.take() {
                dead.stop();
            }
            return Err(self.fail(ScoreProblem::Unasked { answer: extra }));
        }
        r.requests += 1;
        let id = r.requests;
        let request = json!({"id": id, "claim": claim, "source": source}).to_string();
        let sent = writeln!(r.stdin, "{request}").and_then(|_| r.stdin.flush());
        let answer = match sent {
            // It may have answered, then exited, before reading: report what it said.
            Err(e) => match r.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(Ok(line)) => self.parse(&line, id),
                _ => Err(self.fail(ScoreProblem::StoppedReading {
                    reason: e.to_string(),
                })),
            },
            Ok(()) => match r.lines.recv_timeout(self.timeout) {
                Ok(Ok(line)) => self.parse(&line, id),
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
            if let Some(dead) = guard.take() {
                dead.stop();
            }
        }
        answer
    }
}
