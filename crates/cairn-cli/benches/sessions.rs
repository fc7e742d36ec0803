//! What an MCP session over HTTP costs the server, and that idle sessions are freed (SPEC.md
//! section 10c): starts `cairn serve` on loopback with a short session time to live, opens
//! sessions with `initialize` requests, and prints the server's resident memory before, with
//! the sessions open, and after they expired. `-- --quick` opens 300 sessions, else 3,000.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server's resident set, in KiB, from /proc (0 where there is no /proc).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Sends one `initialize` and returns the HTTP status.
fn initialize(port: u16) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    if s.write_all(request.as_bytes()).is_err() {
        return 0;
    }
    let mut head = [0u8; 12];
    if s.read_exact(&mut head).is_err() {
        return 0;
    }
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    std::str::from_utf8(&head[9..12])
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sessions: usize = if quick { 300 } else { 3_000 };
    let ttl = 3;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut server = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(dir.path().join("sessions.redb"))
        .args(["serve", "--listen", "127.0.0.1:0", "--session-ttl"])
        .arg(ttl.to_string())
        .arg("--max-sessions")
        .arg(sessions.to_string())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("cairn serve starts");
    let mut line = String::new();
    let mut err = server.stderr.take().expect("its stderr");
    let mut byte = [0u8; 1];
    while err.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
        line.push(byte[0] as char);
    }
    let port: u16 = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("cairn serve says where it listens");
    let pid = server.id();
    let before = rss_kib(pid);
    let started = Instant::now();
    let ok = (0..sessions).filter(|_| initialize(port) == 200).count();
    let took = started.elapsed();
    let open = rss_kib(pid);
    // At the cap, one more is refused; once the idle ones expired, a full second round fits,
    // and the memory they take is reused rather than added.
    let past_cap = initialize(port);
    std::thread::sleep(Duration::from_secs(ttl + 3));
    let idle = rss_kib(pid);
    let again = (0..sessions).filter(|_| initialize(port) == 200).count();
    let second = rss_kib(pid);
    let _ = server.kill();
    let _ = server.wait();
    let per = (open.saturating_sub(before) as f64) / (ok.max(1) as f64);
    println!(
        "sessions opened: {ok} of {sessions} (the cap) in {:.2} s; one more: HTTP {past_cap}",
        took.as_secs_f64()
    );
    println!("server RSS: {before} KiB before, {open} KiB with them open ({per:.1} KiB a session), {idle} KiB after they expired ({ttl} s idle)");
    println!("a second round after expiry: {again} of {sessions} opened, RSS {second} KiB ({:+} KiB on the first round)", second as i64 - open as i64);
    assert_eq!(
        ok, sessions,
        "every initialize under the cap is answered 200"
    );
    assert_eq!(past_cap, 503, "past the cap, 503");
    assert_eq!(again, sessions, "expired sessions make room");
}
