//! The stdio transport: newline-delimited JSON-RPC on standard input and output, where every
//! message gets an answer (SPEC.md section 10c).
//!
//! rmcp's own stdio transport drops a line that is not JSON, is not UTF-8, nests too deep or
//! is longer than its limit, without a reply, so a client waits for ever. This one reads the
//! lines itself, on a thread of its own, and answers such a line at once with a JSON-RPC error:
//! -32700 (parse error) for a line that is not a JSON text, -32600 (invalid request) for JSON
//! that is no JSON-RPC message, with the request's id where it can be read, and for a line
//! longer than [`MAX_LINE_BYTES`] (skipped to its end, never held whole). Good messages go on
//! to rmcp; answers from both go out through one writer, so lines never interleave.

use crate::jsonrpc::{error_line, read, Read};
use cairn::ingest::{read_line, LineRead, MAX_LINE_BYTES};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::RoleServer;
use serde_json::Value;
use std::future::Future;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Messages read and not yet taken by rmcp, and lines written and not yet flushed: enough to
/// keep both sides busy, bounded so that a client that floods is slowed, not buffered.
const QUEUE: usize = 16;

/// The transport rmcp serves over: messages read by the reader thread, answers to the writer.
pub struct Stdio {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<Vec<u8>>,
}

/// Starts reading standard input on a thread of its own and writing standard output on a
/// task; returns the transport and the writer task, to be awaited once the session ends.
pub fn transport() -> std::io::Result<(Stdio, tokio::task::JoinHandle<()>)> {
    let (messages, incoming) = mpsc::channel(QUEUE);
    let (outgoing, mut lines) = mpsc::channel::<Vec<u8>>(QUEUE);
    let answers = outgoing.clone();
    std::thread::Builder::new()
        .name("cairn-stdin".into())
        .spawn(move || read_messages(std::io::stdin().lock(), &messages, &answers))?;
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(line) = lines.recv().await {
            if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                return;
            }
        }
    });
    Ok((Stdio { incoming, outgoing }, writer))
}

/// Reads lines until the input ends or nobody listens: each is a message for rmcp, or is
/// answered at once with the error it deserves.
fn read_messages(
    mut input: impl std::io::BufRead,
    messages: &mpsc::Sender<ClientJsonRpcMessage>,
    answers: &mpsc::Sender<Vec<u8>>,
) {
    let mut buf = Vec::new();
    loop {
        let answer = match read_line(&mut input, &mut buf) {
            Err(_) | Ok(LineRead::End) => return,
            Ok(LineRead::TooLong(n)) => error_line(
                &Value::Null,
                -32600,
                format!("the message is {n} bytes long, past the limit of {MAX_LINE_BYTES} bytes; it was skipped unread"),
            ),
            Ok(LineRead::Line) => match read(&buf) {
                Read::Message(m) => {
                    if messages.blocking_send(*m).is_err() {
                        return;
                    }
                    continue;
                }
                Read::Skip => continue,
                Read::Answer(line) => line,
            },
        };
        if answers.blocking_send(answer).is_err() {
            return;
        }
    }
}

impl rmcp::transport::Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.outgoing.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            out.send(line)
                .await
                .map_err(|_| std::io::ErrorKind::BrokenPipe.into())
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_limit_is_answered_without_being_held() {
        let (messages, _keep) = mpsc::channel(1);
        let (answers, mut got) = mpsc::channel(4);
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.push(b'\n');
        read_messages(std::io::Cursor::new(input), &messages, &answers);
        let line: Value = serde_json::from_slice(&got.try_recv().unwrap()).unwrap();
        assert_eq!(line["error"]["code"], -32600);
        assert!(line["error"]["message"]
            .as_str()
            .unwrap()
            .contains("past the limit"));
    }
}
