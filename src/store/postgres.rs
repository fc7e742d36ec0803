//! The store on PostgreSQL (feature `postgres`, SPEC.md section 17): four tables and three kinds
//! of advisory lock.
//!
//! - `cairn_log (idx, rid, kind, stream, bytes)`: every record's canonical bytes, keyed by its
//!   log index, the Merkle tree's leaf order; `rid` is unique.
//! - `cairn_rows (tbl, key, value, at)`: every derived row ([`super::rows`]), keyed by its table
//!   and key, with the log index of the batch that last set it (`value` is null once removed),
//!   written in the transaction of the records that set it.
//! - `cairn_head (size)`: one row, the log's size, updated last in every append.
//! - `cairn_meta (name, value)`: the schema version, the format, the rules version, the ledger
//!   id and its check, and the last signed checkpoint's size and root.
//!
//! A write holds the lock on every stream, or a shared hold on all streams and the locks of its
//! own; it takes the log-order lock only to append, so writers of different streams gate in
//! parallel and append one after the other. Locks are transaction-scoped: a dropped connection
//! rolls its transaction back and frees them.

use super::rows::Change;
use super::shared::{Meta, Published, Pulled, Row, Store, Writing};
use crate::error::{ErrorKind, Result};
use crate::record::Rid;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::{Client, Config, IsolationLevel, NoTls, SimpleQueryMessage};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The version of the tables this build reads and writes, kept in `cairn_meta` as `schema`.
/// Version 1 (2026-12-02) held the log and meta only, each process deriving the rows itself;
/// version 2 holds the derived rows too.
pub const SCHEMA: u8 = 2;

/// Records read from the server per round trip.
const PAGE: i32 = 2_000;

/// The tables of a new ledger.
const CREATE: &str = "
CREATE TABLE cairn_meta (name text PRIMARY KEY, value bytea NOT NULL);
CREATE TABLE cairn_log (
    idx bigint PRIMARY KEY,
    rid bytea NOT NULL UNIQUE,
    kind smallint NOT NULL,
    stream text,
    bytes bytea NOT NULL
);
CREATE TABLE cairn_rows (
    tbl smallint NOT NULL,
    key bytea NOT NULL,
    value bytea,
    at bigint NOT NULL,
    PRIMARY KEY (tbl, key)
);
CREATE INDEX cairn_rows_at ON cairn_rows (at);
CREATE TABLE cairn_head (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    size bigint NOT NULL
);
INSERT INTO cairn_head (size) VALUES (0);
";

/// The advisory lock's key for a name: the first 8 bytes of its BLAKE3 hash.
fn key(name: &str) -> i64 {
    let h = blake3::hash(format!("cairn lock {name}").as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.as_bytes()[..8]);
    i64::from_le_bytes(b)
}

/// A ledger's log on a PostgreSQL server.
pub(crate) struct Postgres(Arc<Inner>);

struct Inner {
    /// The URL as given: it holds no password.
    shown: String,
    config: Config,
    tls: Option<MakeRustlsConnect>,
    /// The connection snapshots read through.
    /// Idle connections for reads. A read takes one out for its length, so no lock is held
    /// while it runs: a batch that began may read while another thread's read waits for the
    /// replica the batch holds.
    readers: Mutex<Vec<Client>>,
    /// Idle connections for writes.
    writers: Mutex<Vec<Client>>,
}

impl Postgres {
    /// Parses `url`, reads the password from the environment and connects once, so a wrong URL
    /// or a server that is down is reported now.
    pub fn connect(url: &str) -> Result<Postgres> {
        let parts = Url::split(url);
        let shown = parts.shown();
        let fail = |detail: String| -> crate::error::Error {
            ErrorKind::Remote {
                url: shown.clone(),
                detail,
            }
            .into()
        };
        if parts.password {
            return Err(fail("the URL holds a password, which cairn would print in its messages; take it out of the URL and put it in $PGPASSWORD, or in a file named by $CAIRN_DB_PASSWORD_FILE".into()));
        }
        let mut mode = String::new();
        let mut root = std::env::var("PGSSLROOTCERT").ok();
        let mut rest = Vec::new();
        for pair in &parts.query {
            match pair.split_once('=') {
                Some(("sslmode", v)) => mode = v.to_string(),
                Some(("sslrootcert", v)) => root = Some(v.to_string()),
                _ => rest.push(pair.as_str()),
            }
        }
        if mode.is_empty() {
            mode = std::env::var("PGSSLMODE").unwrap_or_default();
        }
        let plain = if rest.is_empty() {
            parts.base.clone()
        } else {
            format!("{}?{}", parts.base, rest.join("&"))
        };
        let mut config = Config::from_str(&plain).map_err(|e| {
            fail(format!(
                "the URL cannot be read ({e}); write it as postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        // The driver's own reading decides, whatever the spelling: no password in the URL.
        if config.get_password().is_some() {
            return Err(fail("the URL holds a password, which cairn would print in its messages; take it out of the URL and put it in $PGPASSWORD, or in a file named by $CAIRN_DB_PASSWORD_FILE".into()));
        }
        if let Ok(file) = std::env::var("CAIRN_DB_PASSWORD_FILE") {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                fail(format!(
                    "the password file {file} (named by $CAIRN_DB_PASSWORD_FILE) cannot be read ({e}); fix the path or its permissions"
                ))
            })?;
            config.password(text.lines().next().unwrap_or_default());
        } else if let Ok(p) = std::env::var("PGPASSWORD") {
            config.password(p);
        }
        if config.get_user().is_none() {
            if let Ok(u) = std::env::var("PGUSER").or_else(|_| std::env::var("USER")) {
                config.user(&u);
            }
        }
        config.application_name("cairn");
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let tls = match mode.as_str() {
            "" | "disable" | "allow" | "prefer" => None,
            "require" | "verify-ca" | "verify-full" => {
                config.ssl_mode(postgres::config::SslMode::Require);
                Some(tls(root.as_deref()).map_err(fail)?)
            }
            other => {
                return Err(fail(format!(
                    "sslmode={other} is not a mode cairn knows; give disable, require, verify-ca or verify-full"
                )))
            }
        };
        let inner = Inner {
            shown,
            config,
            tls,
            readers: Mutex::new(Vec::new()),
            writers: Mutex::new(Vec::new()),
        };
        let first = inner.open()?;
        inner
            .readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(first);
        Ok(Postgres(Arc::new(inner)))
    }
}

/// A URL taken apart far enough to tell whether it holds a password and to print it without one.
struct Url {
    /// The scheme (lower case), the user part and the host and path, without the query.
    base: String,
    /// The user part's name, for messages.
    user: Option<String>,
    /// The host, port and path.
    rest: String,
    /// The query's `key=value` pairs.
    query: Vec<String>,
    /// Whether a password is in the user part or the query.
    password: bool,
}

impl Url {
    fn split(url: &str) -> Url {
        let (scheme, after) = url.split_once("://").unwrap_or(("postgres", url));
        let scheme = scheme.to_ascii_lowercase();
        // The user part ends at the last `@` before the query: a password may hold `/` or `?`.
        let (front, query) = match after.rfind('@') {
            Some(at) => match after[at..].split_once('?') {
                Some((host, q)) => (format!("{}{host}", &after[..at]), q),
                None => (after.to_string(), ""),
            },
            None => match after.split_once('?') {
                Some((host, q)) => (host.to_string(), q),
                None => (after.to_string(), ""),
            },
        };
        let (userinfo, rest) = match front.rfind('@') {
            Some(at) => (Some(&front[..at]), front[at + 1..].to_string()),
            None => (None, front.clone()),
        };
        let query: Vec<String> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let password =
            userinfo.is_some_and(|u| u.contains(':')) || query.iter().any(|p| names_password(p));
        Url {
            base: format!("{scheme}://{front}"),
            user: userinfo.map(|u| u.split(':').next().unwrap_or_default().to_string()),
            rest,
            query,
            password,
        }
    }

    /// The URL for messages: the user's name, the host, port and path, and the query without a
    /// password.
    fn shown(&self) -> String {
        let scheme = self.base.split("://").next().unwrap_or("postgres");
        let user = self
            .user
            .as_ref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let query: Vec<&str> = self
            .query
            .iter()
            .map(|p| {
                if names_password(p) {
                    "password=***"
                } else {
                    p.as_str()
                }
            })
            .collect();
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{}", query.join("&"))
        };
        format!("{scheme}://{user}{}{query}", self.rest)
    }
}

/// Whether a query pair `key=value` sets the password, however its key is spelt: the key is
/// percent-decoded first (`%70assword`), as the driver decodes it.
fn names_password(pair: &str) -> bool {
    let key = pair.split('=').next().unwrap_or_default();
    percent_encoding::percent_decode_str(key)
        .decode_utf8_lossy()
        .trim()
        .eq_ignore_ascii_case("password")
}

/// The TLS settings of a URL that asks for TLS: the server's certificate is checked against
/// the CA certificates in `root` (PEM), or else against the Mozilla roots, and its name against
/// the host, whatever the mode (cairn never sends a ledger to a server it has not verified).
fn tls(root: Option<&str>) -> std::result::Result<MakeRustlsConnect, String> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    match root {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path).map_err(|e| {
                format!("the CA certificate file {path} (sslrootcert) cannot be read ({e}); give a PEM file of the CA that signed the server's certificate")
            })?;
            for cert in certs {
                let cert = cert.map_err(|e| format!("the CA certificate file {path} (sslrootcert) is not PEM ({e}); give a PEM file"))?;
                roots.add(cert).map_err(|e| {
                    format!("the CA certificate file {path} (sslrootcert) holds a certificate rustls refuses ({e}); give the CA's certificate")
                })?;
            }
            if roots.is_empty() {
                return Err(format!("the CA certificate file {path} (sslrootcert) holds no certificate; give a PEM file of the CA"));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS cannot be set up ({e})"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

impl Inner {
    fn fail(&self, detail: String) -> crate::error::Error {
        ErrorKind::Remote {
            url: self.shown.clone(),
            detail,
        }
        .into()
    }

    /// The error for a failed query: the server's own words, and what to do.
    fn query_failed(&self, doing: &str, e: &postgres::Error) -> crate::error::Error {
        let way = if lost(e) {
            "the connection was lost; check that the server runs, then retry"
        } else {
            "check that the user may read and write the cairn_ tables of this database"
        };
        self.fail(format!("{doing} failed ({}); {way}", said(e)))
    }

    /// A new connection.
    fn open(&self) -> Result<Client> {
        let made = match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        };
        made.map_err(|e| {
            let mut detail = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                detail = format!("{detail}: {s}");
                source = s.source();
            }
            self.fail(format!(
                "cannot connect ({detail}); check that the server runs, that the URL's host, port, user and database are right, that $PGPASSWORD or the file $CAIRN_DB_PASSWORD_FILE names holds the password the server asks for, and, with TLS, that sslrootcert names the CA of the server's certificate"
            ))
        })
    }

    /// Runs `f` on an idle read connection, or a new one, and keeps it for the next read.
    /// A read that fails because a kept connection was lost (the server restarted, say) runs
    /// once more on a new one: it wrote nothing.
    fn with_reader<T>(&self, mut f: impl FnMut(&mut Client) -> Result<T>) -> Result<T> {
        let pooled = self.readers.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let (mut client, kept) = match pooled {
            Some(c) if !c.is_closed() => (c, true),
            _ => (self.open()?, false),
        };
        let mut out = f(&mut client);
        if out.is_err() && kept && client.is_closed() {
            client = self.open()?;
            out = f(&mut client);
        }
        if !client.is_closed() {
            self.readers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(client);
        }
        out
    }

    /// Reads the meta table, or `None` when there is none; checks the schema version.
    fn read_meta(&self, client: &mut impl postgres::GenericClient) -> Result<Option<Meta>> {
        let exists: bool = client
            .query_typed_one("SELECT to_regclass('cairn_meta') IS NOT NULL", &[])
            .map_err(|e| self.query_failed("looking for the ledger's tables", &e))?
            .get(0);
        if !exists {
            return Ok(None);
        }
        let rows = client
            .query_typed("SELECT name, value FROM cairn_meta ORDER BY name", &[])
            .map_err(|e| self.query_failed("reading the ledger's meta", &e))?;
        let meta: Meta = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        self.check_schema(&meta)?;
        Ok(Some(meta))
    }

    /// Checks that the meta is of this build's schema version.
    fn check_schema(&self, meta: &Meta) -> Result<()> {
        let schema = meta
            .iter()
            .find(|(n, _)| n == "schema")
            .map(|(_, v)| v.clone());
        match schema.as_deref() {
            Some([SCHEMA]) => Ok(()),
            Some(v) => Err(self.fail(format!(
                "its tables are of cairn schema version {}, and this build reads version {SCHEMA}; open it with the cairn build that wrote it, and `cairn copy` it to a file to move it",
                v.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(".")
            ))),
            None => Err(self.fail(
                "its cairn_meta table has no schema version, so it was not written by cairn; give a database cairn created, or an empty one".into(),
            )),
        }
    }

    /// The log's size and the meta, read by one statement (so from one snapshot), with the
    /// schema version checked.
    fn head_and_meta(&self, client: &mut impl postgres::GenericClient) -> Result<(u64, Meta)> {
        let rows = client
            .query_typed(
                "SELECT h.size, m.name, m.value, (SELECT max(idx) FROM cairn_log) FROM cairn_head h CROSS JOIN cairn_meta m",
                &[],
            )
            .map_err(|e| self.query_failed("reading the log's head", &e))?;
        let Some(first) = rows.first() else {
            return Err(self.fail(
                "its cairn_head or cairn_meta table is empty; restore the database from a backup"
                    .into(),
            ));
        };
        let size: i64 = first.get(0);
        let last: Option<i64> = first.get(3);
        if last.map_or(0, |l| l + 1) != size {
            return Err(self.fail(format!(
                "its head says the log holds {size} records, and its last record is at index {}; the cairn tables were changed outside cairn: restore the database from a backup",
                last.map_or("none".to_string(), |l| l.to_string())
            )));
        }
        let meta: Meta = rows.iter().map(|r| (r.get(1), r.get(2))).collect();
        self.check_schema(&meta)?;
        Ok((size as u64, meta))
    }

    /// Reads the log from `from` up to `size`, page by page, checking that the indexes follow
    /// each other and that every one is there.
    fn read_log(
        &self,
        client: &mut impl postgres::GenericClient,
        from: u64,
        size: u64,
        f: &mut dyn FnMut(Pulled) -> Result<()>,
    ) -> Result<()> {
        let mut next = from;
        while next < size {
            let rows = client
                .query_typed(
                    "SELECT idx, rid, bytes, kind, stream FROM cairn_log WHERE idx >= $1 AND idx < $2 ORDER BY idx LIMIT $3",
                    &[
                        (&(next as i64), Type::INT8),
                        (&(size as i64), Type::INT8),
                        (&i64::from(PAGE), Type::INT8),
                    ],
                )
                .map_err(|e| self.query_failed("reading the log", &e))?;
            if rows.is_empty() {
                return Err(self.fail(format!(
                    "its head says the log holds {size} records, and it ends at {next}; the cairn tables were changed outside cairn: restore the database from a backup"
                )));
            }
            for row in rows {
                let index: i64 = row.get(0);
                let rid: Vec<u8> = row.get(1);
                if index as u64 != next {
                    return Err(self.fail(format!(
                        "its log has no record at index {next} (the next is at {index}); the cairn tables were changed outside cairn: restore the database from a backup"
                    )));
                }
                let rid: [u8; 32] = rid.try_into().map_err(|_| {
                    self.fail(format!(
                        "the rid at log index {next} is not 32 bytes; restore the database from a backup"
                    ))
                })?;
                let kind: i16 = row.get(3);
                f(Pulled::Record(Row {
                    index: next,
                    rid: Rid(rid),
                    bytes: row.get(2),
                    kind: u8::try_from(kind).unwrap_or_default(),
                    stream: row.get(4),
                }))?;
                next += 1;
            }
        }
        Ok(())
    }

    /// Reads the derived rows that the batches at log indexes `from` to `size` set or removed,
    /// as they stand (a removed one as a removal), in table and key order, in one query whose
    /// rows stream in as they are read. From 0, every row, in the primary key's order; from a
    /// later index, the few the `at` index finds, sorted. Removals come from 0 too: a replica
    /// that another thread's batch filled meanwhile may hold a row a later batch removed.
    fn read_rows(
        &self,
        client: &mut impl postgres::GenericClient,
        from: u64,
        size: u64,
        f: &mut dyn FnMut(Pulled) -> Result<()>,
    ) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator;
        let failed = |e: postgres::Error| self.query_failed("reading the derived rows", &e);
        let (from, size) = (from as i64, size as i64);
        let mut rows = if from == 0 {
            client.query_typed_raw(
                "SELECT tbl, key, value FROM cairn_rows WHERE at < $1 ORDER BY tbl, key",
                [(&size as &(dyn postgres::types::ToSql + Sync), Type::INT8)],
            )
        } else {
            client.query_typed_raw(
                "SELECT tbl, key, value FROM cairn_rows WHERE at >= $1 AND at < $2 ORDER BY tbl, key",
                [
                    (&from as &(dyn postgres::types::ToSql + Sync), Type::INT8),
                    (&size, Type::INT8),
                ],
            )
        }
        .map_err(failed)?;
        while let Some(row) = rows.next().map_err(failed)? {
            let table: i16 = row.get(0);
            f(Pulled::Row(Change {
                table: u8::try_from(table).unwrap_or(u8::MAX),
                key: row.get(1),
                value: row.get(2),
            }))?;
        }
        Ok(())
    }

    /// Creates the tables and meta unless a ledger is there, in one transaction begun after
    /// the creation lock was taken; returns the ledger's meta.
    fn create_in(&self, client: &mut Client, meta: &Meta) -> Result<Meta> {
        let failed = |e: postgres::Error| self.query_failed("creating the ledger", &e);
        let mut tx = client.transaction().map_err(failed)?;
        if let Some(there) = self.read_meta(&mut tx)? {
            return Ok(there);
        }
        let stray: bool = tx
            .query_typed_one(
                "SELECT to_regclass('cairn_log') IS NOT NULL OR to_regclass('cairn_head') IS NOT NULL OR to_regclass('cairn_rows') IS NOT NULL",
                &[],
            )
            .map_err(failed)?
            .get(0);
        if stray {
            return Err(self.fail("it has a cairn_log, cairn_rows or cairn_head table but no cairn_meta table, so it is not a whole cairn ledger; give an empty database, or drop those tables".into()));
        }
        tx.batch_execute(CREATE).map_err(failed)?;
        let mut all = meta.clone();
        all.push(("schema".into(), vec![SCHEMA]));
        for (name, value) in &all {
            tx.execute_typed(
                "INSERT INTO cairn_meta (name, value) VALUES ($1, $2)",
                &[(name, Type::TEXT), (value, Type::BYTEA)],
            )
            .map_err(failed)?;
        }
        tx.commit().map_err(failed)?;
        Ok(all)
    }
}

/// Whether an error means the connection is gone (closed, or ended by the server).
fn lost(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error()
            .is_none_or(|d| matches!(d.severity(), "FATAL" | "PANIC"))
}

/// What the server said of a failed query.
fn said(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

impl Store for Postgres {
    fn location(&self) -> &str {
        &self.0.shown
    }

    fn meta(&self) -> Result<Option<Meta>> {
        self.0.with_reader(|c| self.0.read_meta(c))
    }

    fn create(&self, meta: &Meta) -> Result<Meta> {
        let inner = &self.0;
        inner.with_reader(|client| {
            // A session lock, held across the transaction: a second creator's transaction
            // begins after the first one's committed, and sees its tables.
            let lock = |client: &mut Client, verb: &str| {
                client
                    .batch_execute(&format!("SELECT {verb}({})", key("create")))
                    .map_err(|e| inner.query_failed("creating the ledger", &e))
            };
            lock(client, "pg_advisory_lock")?;
            let made = inner.create_in(client, meta);
            let unlocked = lock(client, "pg_advisory_unlock");
            let made = made?;
            unlocked?;
            Ok(made)
        })
    }

    fn read(&self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<Meta> {
        let inner = &self.0;
        // Whether `f` was given anything: a read whose connection was lost after that is not
        // run again, since `f` would be given the same records twice.
        let mut given = false;
        inner.with_reader(|client| {
            if given {
                return Err(inner.fail(
                    "the connection was lost while the log was read, and nothing read was kept; check that the server runs, then retry".into(),
                ));
            }
            // One statement is one snapshot: when nothing is new, one round trip.
            let (size, meta) = inner.head_and_meta(client)?;
            if size <= from {
                return Ok(meta);
            }
            let failed = |e: postgres::Error| inner.query_failed("reading the log", &e);
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(failed)?;
            let (size, meta) = inner.head_and_meta(&mut tx)?;
            let mut counted = |pulled: Pulled| {
                given = true;
                f(pulled)
            };
            inner.read_log(&mut tx, from, size, &mut counted)?;
            inner.read_rows(&mut tx, from, size, &mut counted)?;
            tx.commit().map_err(failed)?;
            Ok(meta)
        })
    }

    fn begin(&self, streams: Option<&[String]>) -> Result<Box<dyn Writing>> {
        let inner = &self.0;
        let pooled = inner
            .writers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut client = match pooled {
            Some(c) if !c.is_closed() => c,
            _ => inner.open()?,
        };
        // The transaction and its locks in one round trip; the keys are numbers cairn made.
        let mut sql = String::from("BEGIN;");
        match streams {
            None => sql.push_str(&format!(
                "SELECT pg_advisory_xact_lock({});",
                key("streams")
            )),
            Some(names) => {
                sql.push_str(&format!(
                    "SELECT pg_advisory_xact_lock_shared({});",
                    key("streams")
                ));
                let mut keys: Vec<i64> =
                    names.iter().map(|s| key(&format!("stream {s}"))).collect();
                // One order for every writer, so two writers never wait on each other.
                keys.sort_unstable();
                keys.dedup();
                for k in keys {
                    sql.push_str(&format!("SELECT pg_advisory_xact_lock({k});"));
                }
            }
        }
        if let Err(e) = client.batch_execute(&sql) {
            // A kept connection the server closed meanwhile: nothing was done; once more.
            if !client.is_closed() {
                return Err(inner.query_failed("taking the write locks", &e));
            }
            client = inner.open()?;
            client
                .batch_execute(&sql)
                .map_err(|e| inner.query_failed("taking the write locks", &e))?;
        }
        Ok(Box::new(PgWriting {
            inner: Arc::clone(inner),
            client: Some(client),
        }))
    }
}

/// A write transaction on the server, holding its locks.
struct PgWriting {
    inner: Arc<Inner>,
    /// The connection, until the transaction ends.
    client: Option<Client>,
}

impl PgWriting {
    fn client(&mut self) -> Result<&mut Client> {
        let inner = &self.inner;
        self.client
            .as_mut()
            .ok_or_else(|| inner.fail("the write was already published".into()))
    }
}

impl Writing for PgWriting {
    fn tail(&mut self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<()> {
        let inner = Arc::clone(&self.inner);
        let client = self.client()?;
        let size: i64 = client
            .query_typed_one("SELECT size FROM cairn_head", &[])
            .map_err(|e| inner.query_failed("reading the log's head", &e))?
            .get(0);
        inner.read_log(client, from, size as u64, f)?;
        inner.read_rows(client, from, size as u64, f)
    }

    fn publish(
        &mut self,
        base: u64,
        records: &[Row],
        rows: &[Change],
        meta: &Meta,
    ) -> Result<Published> {
        let inner = Arc::clone(&self.inner);
        let client = self.client()?;
        let rolled_back = |e: postgres::Error| {
            inner.fail(format!(
                "appending failed ({}), and the server rolled the batch back: none of its records was written; retry it (the same records get the same rids, and a record already in the ledger is not written twice)",
                said(&e)
            ))
        };
        // The table the derived rows are staged in, the lock on the log's order and the head
        // under it, in one round trip.
        let answer = client
            .simple_query(&format!(
                "CREATE TEMP TABLE IF NOT EXISTS cairn_stage (tbl smallint, key bytea, value bytea) ON COMMIT DELETE ROWS; SELECT pg_advisory_xact_lock({}); SELECT size FROM cairn_head",
                key("log")
            ))
            .map_err(rolled_back)?;
        let head: u64 = answer
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r)
                    if r.columns().first().is_some_and(|c| c.name() == "size") =>
                {
                    r.get(0).and_then(|v| v.parse().ok())
                }
                _ => None,
            })
            .next()
            .ok_or_else(|| {
                inner.fail(
                    "its cairn_head table has no row; restore the database from a backup".into(),
                )
            })?;
        if head != base {
            return Ok(Published::Moved(head));
        }
        if !records.is_empty() {
            let sink = client
                .copy_in("COPY cairn_log (idx, rid, kind, stream, bytes) FROM STDIN BINARY")
                .map_err(rolled_back)?;
            let mut writer = BinaryCopyInWriter::new(
                sink,
                &[Type::INT8, Type::BYTEA, Type::INT2, Type::TEXT, Type::BYTEA],
            );
            for row in records {
                writer
                    .write(&[
                        &(row.index as i64),
                        &row.rid.0.as_slice(),
                        &i16::from(row.kind),
                        &row.stream,
                        &row.bytes.as_slice(),
                    ])
                    .map_err(rolled_back)?;
            }
            writer.finish().map_err(rolled_back)?;
        }
        if !rows.is_empty() {
            let sink = client
                .copy_in("COPY cairn_stage (tbl, key, value) FROM STDIN BINARY")
                .map_err(rolled_back)?;
            let mut writer = BinaryCopyInWriter::new(sink, &[Type::INT2, Type::BYTEA, Type::BYTEA]);
            for change in rows {
                writer
                    .write(&[
                        &i16::from(change.table),
                        &change.key.as_slice(),
                        &change.value.as_deref(),
                    ])
                    .map_err(rolled_back)?;
            }
            writer.finish().map_err(rolled_back)?;
        }
        for (name, value) in meta {
            client
                .execute_typed(
                    "INSERT INTO cairn_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                    &[(name, Type::TEXT), (value, Type::BYTEA)],
                )
                .map_err(rolled_back)?;
        }
        // The staged rows into place, the head last, then the commit, in one round trip. An
        // error the server reports means it rolled the transaction back; a lost connection
        // leaves the outcome unknown.
        let size = base + records.len() as u64;
        let place = if rows.is_empty() {
            String::new()
        } else {
            format!("INSERT INTO cairn_rows (tbl, key, value, at) SELECT tbl, key, value, {base} FROM cairn_stage ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value, at = EXCLUDED.at; ")
        };
        if let Err(e) = client.batch_execute(&format!(
            "{place}UPDATE cairn_head SET size = {size}; COMMIT"
        )) {
            self.client = None;
            if e.as_db_error().is_some() {
                return Err(rolled_back(e));
            }
            return Err(inner.fail(format!(
                "the connection was lost while committing ({e}), so the batch may or may not be in the log; retry it: a record already in the ledger is not written twice"
            )));
        }
        if let Some(c) = self.client.take() {
            inner
                .writers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(c);
        }
        Ok(Published::Done)
    }
}

impl Drop for PgWriting {
    fn drop(&mut self) {
        if let Some(mut c) = self.client.take() {
            if !c.is_closed() && c.batch_execute("ROLLBACK").is_ok() {
                self.inner
                    .writers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(c);
            }
        }
    }
}
