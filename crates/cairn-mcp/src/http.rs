//! `cairn serve`: the tools over Streamable HTTP at `/mcp` (SPEC.md section 10c).
//!
//! Bound to a loopback address unless told otherwise. Every request must carry exactly one Host
//! header equal to an allowed host, and at most one Origin header equal to an allowed origin
//! (against DNS rebinding: a web page cannot reach a loopback server through a name it
//! controls). A bearer token, when set, is required of every request; it is required to listen
//! on anything but loopback. A body that is no JSON-RPC message is answered 400 with a
//! JSON-RPC error. Sessions expire when idle and are capped, and so are connections; a
//! connection must send its headers in time ([`Limits`]).

use crate::jsonrpc::{error_line, read, Read};
use crate::tools::Memory;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// How `serve` listens, and the limits that keep one client from holding it.
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
    /// The limits.
    pub limits: Limits,
}

/// What one client may hold of the server (SPEC.md section 10c gives the defaults).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// MCP sessions open at once; an `initialize` past it is refused with 503.
    pub max_sessions: usize,
    /// A session with no request for this long is closed and its memory freed.
    pub session_ttl: Duration,
    /// TCP connections open at once; one past it is answered 503 and closed.
    pub max_connections: usize,
    /// A connection must deliver a request's complete headers within this time of opening,
    /// or of its previous response: it bounds a slow sender of headers and an idle
    /// keep-alive connection alike.
    pub header_timeout: Duration,
    /// A request's body must arrive within this time of its headers.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_sessions: 1024,
            session_ttl: Duration::from_secs(300),
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// The largest request body read, in bytes: the JSON Lines limit of a line, so that anything
/// an ingest takes a tool call takes too.
const MAX_BODY: usize = cairn::ingest::MAX_LINE_BYTES;

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

/// What the guards compare a request with.
struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Option<String>,
    sessions: Arc<LocalSessionManager>,
    limits: Limits,
    /// The requests of each session whose answer is not yet sent, by JSON-RPC id
    /// ([`InFlight`]).
    in_flight: InFlight,
}

/// The (session, JSON-RPC id) pairs of requests still being answered. A client that sends a
/// second request with an id the first still holds would get one answer for two requests, so
/// the second is refused before it reaches the tools (SPEC.md 10c).
#[derive(Default, Clone)]
struct InFlight(Arc<std::sync::Mutex<std::collections::HashSet<(String, String)>>>);

impl InFlight {
    /// Takes the pair, or `None` when a request holds it; the pair is given back when the
    /// returned value is dropped.
    fn take(&self, session: &str, id: &str) -> Option<Release> {
        let key = (session.to_string(), id.to_string());
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.insert(key.clone()).then(|| Release {
            set: self.clone(),
            key,
        })
    }
}

/// Gives a request's (session, id) back when its answer has been sent or abandoned.
struct Release {
    set: InFlight,
    key: (String, String),
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut held = (self.set.0.lock()).unwrap_or_else(std::sync::PoisonError::into_inner);
        held.remove(&self.key);
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
    let limits = options.limits;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_hosts(options.hosts())
        .with_allowed_origins(options.origins())
        .with_max_request_body_bytes(MAX_BODY);
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.session_ttl);
    let sessions = Arc::new(manager);
    let service = StreamableHttpService::new(move || Ok(memory.clone()), sessions.clone(), config);
    let guard = Arc::new(Guard {
        hosts: options.hosts(),
        origins: options.origins(),
        token: options.token.clone(),
        sessions,
        limits,
        in_flight: InFlight::default(),
    });
    // Layers run outside in, the last added first: Host and Origin, then the token, then the
    // body.
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(guard.clone(), body))
        .layer(middleware::from_fn_with_state(guard.clone(), bearer))
        .layer(middleware::from_fn_with_state(guard, host_and_origin));
    ready(bound);
    accept(listener, app, limits, stop).await;
    Ok(())
}

/// Accepts connections until `stop`, each served by hyper's HTTP/1 with a header timeout, at
/// most `max_connections` at once; then lets those open finish, for a bounded time.
async fn accept(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: Limits,
    stop: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let tcp = tokio::select! {
            r = listener.accept() => match r {
                Ok((tcp, _)) => tcp,
                // Out of file descriptors and the like: wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tokio::spawn(too_many(tcp, limits.max_connections));
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(tcp), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop.cancelled() => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(10), permits.acquire_many(all)).await;
}

/// Answers a connection past the cap with 503 and closes it.
async fn too_many(mut tcp: tokio::net::TcpStream, cap: usize) {
    let body = format!(
        "cairn serve holds its limit of {cap} connections; retry when a client has closed one"
    );
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), tcp.write_all(reply.as_bytes())).await;
}

/// 403 with a sentence.
fn forbidden(what: String) -> Response {
    (StatusCode::FORBIDDEN, what).into_response()
}

/// Refuses a request unless it has exactly one Host header, equal to an allowed host; an
/// absolute-form target naming that same authority over http, or none; and at most one
/// Origin header, equal to an allowed origin (against DNS rebinding: a web page reaching a
/// loopback server through a name it controls).
async fn host_and_origin(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let hosts: Vec<_> = req.headers().get_all(header::HOST).iter().collect();
    let host = match hosts.as_slice() {
        [one] => one.to_str().ok().filter(|h| exactly_one_of(h, &g.hosts)),
        _ => None,
    };
    let Some(host) = host else {
        return forbidden(format!(
            "cairn serve answers only a request with one Host header naming it ({}); start it with --allow-host NAME to be reached by another name",
            g.hosts.join(", ")
        ));
    };
    if let Some(authority) = req.uri().authority() {
        if req.uri().scheme_str() != Some("http") || !authority.as_str().eq_ignore_ascii_case(host)
        {
            return forbidden(format!(
                "the request's target names {authority}, which is not the host it was sent to ({host}); send it to /mcp"
            ));
        }
    }
    let origins: Vec<_> = req.headers().get_all(header::ORIGIN).iter().collect();
    let allowed = match origins.as_slice() {
        [] => true,
        [one] => one.to_str().is_ok_and(|o| exactly_one_of(o, &g.origins)),
        _ => false,
    };
    if !allowed {
        return forbidden(format!(
            "cairn serve answers a browser page only from an allowed origin ({}), given once; start it with --allow-origin ORIGIN to allow another",
            g.origins.join(", ")
        ));
    }
    next.run(req).await
}

/// Whether `value` equals one of `allowed`, ignoring ASCII case, as a whole string.
fn exactly_one_of(value: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|a| a.eq_ignore_ascii_case(value))
}

/// Reads a JSON body whole (bounded in size and time) and answers one that is no JSON-RPC
/// message with 400 and a JSON-RPC error; refuses a new session past the cap; and answers a
/// session's close with 204, where rmcp says 202.
async fn body(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if req.method() == Method::DELETE {
        let mut response = next.run(req).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        return response;
    }
    if req.method() != Method::POST || !json {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes =
        match tokio::time::timeout(g.limits.body_timeout, axum::body::to_bytes(body, MAX_BODY))
            .await
        {
            Err(_) => {
                return (
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request's body did not arrive within {} s",
                        g.limits.body_timeout.as_secs()
                    ),
                )
                    .into_response()
            }
            Ok(Err(e)) => {
                let too_long = std::error::Error::source(&e)
                    .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
                return if too_long {
                    jsonrpc_error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        -32600,
                        format!("the request's body is past the limit of {MAX_BODY} bytes"),
                    )
                } else {
                    jsonrpc_error(
                        StatusCode::BAD_REQUEST,
                        -32700,
                        format!("the request's body could not be read: {e}"),
                    )
                };
            }
            Ok(Ok(b)) => b,
        };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            "the request's body is empty; send one JSON-RPC message".into(),
        );
    }
    let mut release = None;
    match read(&bytes) {
        Read::Answer(line) => return json_response(StatusCode::BAD_REQUEST, line),
        Read::Message(m) => {
            let session = parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok());
            if let (Some(session), JsonRpcMessage::Request(r)) = (session, &*m) {
                let id = serde_json::to_value(&r.id).unwrap_or_default();
                release = g.in_flight.take(session, &id.to_string());
                if release.is_none() {
                    return json_response(
                        StatusCode::CONFLICT,
                        error_line(
                            &id,
                            -32600,
                            format!("a request with id {id} is still being answered in this session; wait for its answer, or give this request an id of its own (nothing of it was done)"),
                        ),
                    );
                }
            }
            let opens = !parts.headers.contains_key("mcp-session-id")
                && matches!(&*m, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)));
            if opens && g.sessions.sessions.read().await.len() >= g.limits.max_sessions {
                return jsonrpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    -32000,
                    format!(
                        "cairn serve holds its limit of {} sessions; close one (DELETE /mcp with its Mcp-Session-Id) or retry once an idle one expires ({} s without a request)",
                        g.limits.max_sessions,
                        g.limits.session_ttl.as_secs()
                    ),
                );
            }
        }
        Read::Skip => {}
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    match release {
        // The id stays taken until the answer's body (an event stream) is sent or dropped.
        Some(release) => response.map(|body| {
            Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                let _held = &release;
                frame
            }))
        }),
        None => response,
    }
}

/// A JSON-RPC error without an id, as an HTTP response of `status`.
fn jsonrpc_error(status: StatusCode, code: i64, message: String) -> Response {
    json_response(status, error_line(&serde_json::Value::Null, code, message))
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Requires `Authorization: Bearer TOKEN` when a token is set.
async fn bearer(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    if let Some(expected) = g.token.as_deref() {
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
