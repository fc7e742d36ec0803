//! `cairn serve`: the tools over Streamable HTTP at `/mcp` (SPEC.md section 10c).
//!
//! Bound to a loopback address unless told otherwise. Every request's Host header must be one
//! of the allowed hosts and its Origin header, when it has one, one of the allowed origins
//! (rmcp's own checks, against DNS rebinding: a web page cannot reach a loopback server
//! through a name it controls). A bearer token, when set, is required of every request; it is
//! required to listen on anything but loopback.

use crate::tools::Memory;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How `serve` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// Host header values accepted, beyond the loopback names with the listening port.
    pub allowed_hosts: Vec<String>,
    /// Origin header values accepted, beyond `http://localhost:PORT` and
    /// `http://127.0.0.1:PORT`.
    pub allowed_origins: Vec<String>,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
}

impl HttpOptions {
    /// The Host values accepted: the loopback names with the listening port, and the extra
    /// ones given.
    pub fn hosts(&self) -> Vec<String> {
        let port = self.listen.port();
        let mut hosts = vec![
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
        hosts.extend(self.allowed_hosts.iter().cloned());
        hosts
    }

    /// The Origin values accepted.
    pub fn origins(&self) -> Vec<String> {
        let port = self.listen.port();
        let mut origins = vec![
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
            format!("http://[::1]:{port}"),
        ];
        origins.extend(self.allowed_origins.iter().cloned());
        origins
    }
}

/// Serves the tools over Streamable HTTP until `stop` is cancelled; `ready` is told the address
/// bound (useful with port 0). Refuses a non-loopback address without a token.
pub async fn serve_http(
    memory: Memory,
    options: HttpOptions,
    stop: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    if !options.listen.ip().is_loopback() && options.token.is_none() {
        return Err(format!(
            "refusing to listen on {} without a bearer token: anyone who can reach that address could read and write the ledger; set CAIRN_TOKEN, or listen on 127.0.0.1",
            options.listen
        ));
    }
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the address bound: {e}"))?;
    let options = HttpOptions {
        listen: bound,
        ..options
    };
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_hosts(options.hosts())
        .with_allowed_origins(options.origins());
    let service = StreamableHttpService::new(
        move || Ok(memory.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let token = Arc::new(options.token.clone());
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(token, bearer));
    ready(bound);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
        .map_err(|e| format!("the HTTP server stopped: {e}"))
}

/// Requires `Authorization: Bearer TOKEN` when a token is set.
async fn bearer(State(token): State<Arc<Option<String>>>, req: Request, next: Next) -> Response {
    if let Some(expected) = token.as_deref() {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        // Compared as BLAKE3 hashes, whose equality takes the same time wherever they differ.
        let same =
            given.is_some_and(|g| blake3::hash(g.as_bytes()) == blake3::hash(expected.as_bytes()));
        if !same {
            return (
                StatusCode::UNAUTHORIZED,
                "cairn serve needs the header Authorization: Bearer TOKEN, with the token the server was started with (CAIRN_TOKEN)",
            )
                .into_response();
        }
    }
    next.run(req).await
}
