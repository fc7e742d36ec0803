//! cairn as an agent's memory over the Model Context Protocol (SPEC.md section 10c).
//!
//! One process owns the ledger; agents reach it through MCP tools: over stdio for an agent that
//! starts the server ([`serve_stdio`]), or over Streamable HTTP on a loopback address for
//! many clients at once ([`serve_http`]). The protocol is the official Rust SDK's (`rmcp`).
//!
//! - [`tools`]: the tools, their arguments (with JSON schemas) and what a model reads back.
//! - [`writer`]: the one thread that appends: requests may arrive concurrently, the ledger
//!   decides their order, and reads go on beside a compaction being judged.
//! - [`http`]: the HTTP listener and its guards (Host and Origin allow-lists, bearer token).
//! - [`stdio`]: newline-delimited JSON-RPC on standard input and output, every line answered.
//!
//! The server keeps no state beyond the ledger: every write is committed before its answer is
//! sent, so killing the process loses nothing it acknowledged.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod http;
mod jsonrpc;
pub mod sampling;
pub mod stdio;
pub mod tools;
pub mod writer;

pub use http::{serve_http, HttpOptions, Limits};
pub use tools::Memory;

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

/// Serves the tools over standard input and output until the client closes them or `stop` is
/// cancelled. Every line gets an answer: a message rmcp cannot read is answered with a JSON-RPC
/// error by cairn's own transport ([`stdio`]).
pub async fn serve_stdio(memory: Memory, stop: CancellationToken) -> Result<(), String> {
    let (transport, writer) =
        stdio::transport().map_err(|e| format!("cannot start reading standard input: {e}"))?;
    let running = memory
        .serve(transport)
        .await
        .map_err(|e| format!("the MCP session over stdio could not start: {e}"))?;
    let cancel = running.cancellation_token();
    tokio::spawn(async move {
        stop.cancelled().await;
        cancel.cancel();
    });
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session over stdio ended abnormally: {e}"))?;
    // The last answers are written out before the ledger closes; a reader thread still blocked
    // on standard input (the session was cancelled) does not hold this up for long.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
    Ok(())
}

/// Serves the tools over stdio on a runtime of its own, until the client closes the pipes or
/// the process is interrupted (Ctrl-C or SIGTERM): the `cairn mcp` command. Either way the
/// ledger is closed cleanly before it returns.
pub fn run_stdio(memory: Memory) -> Result<(), String> {
    run_until_stopped(memory, serve_stdio)
}

/// Runs `serve` on a runtime of its own with a token that Ctrl-C or SIGTERM cancels; then ends
/// the runtime, dropping every task and with them every handle on the tools, and waits for
/// the writer thread to let go of the ledger, so that it is closed before the process exits.
fn run_until_stopped<F>(
    memory: Memory,
    serve: impl FnOnce(Memory, CancellationToken) -> F,
) -> Result<(), String>
where
    F: std::future::Future<Output = Result<(), String>>,
{
    let closing = memory.closing();
    let runtime = runtime()?;
    let result = runtime.block_on(async move {
        let stop = CancellationToken::new();
        let on_signal = stop.clone();
        tokio::spawn(async move {
            interrupted().await;
            on_signal.cancel();
        });
        serve(memory, stop).await
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    closing.wait();
    result
}

/// Serves the tools over Streamable HTTP on a runtime of its own until interrupted (Ctrl-C or
/// SIGTERM): the `cairn serve` command. `ready` is told the address bound.
pub fn run_http(
    memory: Memory,
    options: HttpOptions,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), String> {
    run_until_stopped(memory, move |memory, stop| {
        serve_http(memory, options, stop, ready)
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))
}

/// Resolves on Ctrl-C, or on SIGTERM where there is one.
async fn interrupted() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
