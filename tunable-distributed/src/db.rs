//! # Connections
//!
//! [`Db`] is one connection to the PostgreSQL server that holds the shared state, with what the
//! long-running commands need around it:
//!
//! - **Clear errors.** The URL is parsed first (`postgres://user:password@host:port/database` or
//!   `host=... user=... dbname=...`); a malformed URL, a refused connection, a wrong password or a
//!   missing database each give one line naming the server, database and user, never the
//!   password (every form of it is redacted: [`redact`]).
//! - **Schema.** Connecting brings the schema up to date ([`crate::schema`]).
//! - **Reconnection.** A statement that fails because the connection is gone (server restarted,
//!   network cut) makes the connection again, retrying with backoff for up to
//!   [`Db::set_reconnect_timeout`] (default 300 s), and re-issues the `LISTEN`s. [`Db::retry`]
//!   then runs the statement again (for idempotent work); [`Db::once`] instead reports that the
//!   connection was remade (`Ok(None)`), for work whose effect is unknown after a cut, so the
//!   caller can re-read the state (the coordinator rebuilds its strategy from the database).
//!
//! - **Like every PostgreSQL client.** The connection string, the libpq environment variables
//!   (`PGHOST`, `PGUSER`, `PGPASSWORD`, `PGSSLMODE`, ...), the password file and TLS with
//!   `sslmode` and `sslrootcert` are read as libpq reads them ([`crate::conninfo`]); the string
//!   may be empty.

use crate::conninfo::{ConnInfo, ConnectError, describe, source_chain};
use crate::error::DistError;
use crate::schema;
use postgres::Client;
use postgres::error::SqlState;
use std::time::{Duration, Instant};

/// Default time spent reconnecting before giving up.
pub const DEFAULT_RECONNECT: Duration = Duration::from_secs(300);

/// A connection to the shared database that makes itself again when lost.
pub struct Db {
    info: ConnInfo,
    target: String,
    client: Client,
    reconnect: Duration,
    channels: Vec<String>,
    generation: u64,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("target", &self.target)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Connects to `url` (a connection string as libpq reads it, possibly empty: see
    /// [`crate::conninfo`]) and brings the schema up to date. `application` names the connection
    /// on the server (`pg_stat_activity.application_name`), e.g. `tunable worker node3:1234`.
    ///
    /// Fails at once, with one line, on a bad URL or a refused connection: only a connection
    /// lost later is retried.
    pub fn connect(url: &str, application: &str) -> Result<Db, DistError> {
        let mut info = ConnInfo::parse(url)?;
        info.set_application(application);
        let target = info.target();
        let mut client = info.connect().map_err(|e| DistError::Connect {
            target: target.clone(),
            reason: connect_reason(&e, &info),
        })?;
        schema::migrate(&mut client)?;
        Ok(Db {
            info,
            target,
            client,
            reconnect: DEFAULT_RECONNECT,
            channels: Vec::new(),
            generation: 0,
        })
    }

    /// How long to keep trying when the connection is lost.
    pub fn set_reconnect_timeout(&mut self, timeout: Duration) {
        self.reconnect = timeout;
    }

    /// `host:port/database as user`, for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// How many times the connection was made again since [`Db::connect`]. Session state (locks,
    /// prepared statements) does not survive a reconnection.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The client, for work that handles a lost connection itself.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Listens to a notification channel, now and after every reconnection.
    pub fn listen(&mut self, channel: &str) -> Result<(), DistError> {
        self.channels.push(channel.to_owned());
        let sql = format!("LISTEN {channel}");
        self.retry("listening for notifications", |c| c.batch_execute(&sql))
    }

    /// Runs `work`, and again after reconnecting if the connection was lost: for idempotent work.
    pub fn retry<T>(
        &mut self,
        doing: &str,
        mut work: impl FnMut(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, DistError> {
        loop {
            match work(&mut self.client) {
                Ok(v) => return Ok(v),
                Err(e) => self.recover(doing, &e)?,
            }
        }
    }

    /// Runs `work` once. If the connection was lost, reconnects and answers `Ok(None)`: whether
    /// `work` took effect is unknown, so the caller re-reads what it needs.
    pub fn once<T>(
        &mut self,
        doing: &str,
        work: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<Option<T>, DistError> {
        match work(&mut self.client) {
            Ok(v) => Ok(Some(v)),
            Err(e) => self.recover(doing, &e).map(|()| None),
        }
    }

    /// Waits up to `timeout` for a notification on the channels listened to; `true` if one came
    /// (all pending ones are consumed) or the connection was remade meanwhile.
    pub fn wait(&mut self, timeout: Duration) -> Result<bool, DistError> {
        use postgres::fallible_iterator::FallibleIterator;
        let got = self.client.notifications().timeout_iter(timeout).next();
        match got {
            Ok(Some(_)) => {
                let mut pending = self.client.notifications();
                let mut iter = pending.iter();
                while let Ok(Some(_)) = iter.next() {}
                Ok(true)
            }
            Ok(None) if !self.client.is_closed() => Ok(false),
            Ok(None) => {
                self.reconnect(
                    "waiting for notifications",
                    "the server closed the connection",
                )?;
                Ok(true)
            }
            Err(e) => self.recover("waiting for notifications", &e).map(|()| true),
        }
    }

    /// Reconnects if `e` means the connection is gone; otherwise turns it into an error.
    fn recover(&mut self, doing: &str, e: &postgres::Error) -> Result<(), DistError> {
        if self.client.is_closed() || is_connection_error(e) {
            self.reconnect(doing, &describe(e))
        } else {
            Err(DistError::Database {
                doing: doing.to_owned(),
                reason: describe(e),
            })
        }
    }

    fn reconnect(&mut self, doing: &str, reason: &str) -> Result<(), DistError> {
        eprintln!(
            "tunable: lost the database while {doing} ({reason}); reconnecting for up to {} s",
            self.reconnect.as_secs_f64()
        );
        let start = Instant::now();
        let mut pause = Duration::from_millis(100);
        let mut last;
        loop {
            match self.info.connect() {
                Ok(mut client) => {
                    let listens: String = self
                        .channels
                        .iter()
                        .map(|c| format!("LISTEN {c};"))
                        .collect();
                    match client.batch_execute(&listens) {
                        Ok(()) => {
                            self.client = client;
                            self.generation += 1;
                            eprintln!(
                                "tunable: reconnected to {} after {:.1} s",
                                self.target,
                                start.elapsed().as_secs_f64()
                            );
                            return Ok(());
                        }
                        Err(e) => last = describe(&e),
                    }
                }
                Err(e) => last = connect_reason(&e, &self.info),
            }
            if start.elapsed() >= self.reconnect {
                return Err(DistError::Disconnected {
                    target: self.target.clone(),
                    seconds: self.reconnect.as_secs_f64(),
                    reason: last,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }
}

/// Whether an error means the connection itself is gone (rather than a failed statement).
fn is_connection_error(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            code.code().starts_with("08")
                || *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CRASH_SHUTDOWN
                || *code == SqlState::CANNOT_CONNECT_NOW
        }
        // Not an error the server sent: an I/O error, a closed socket, a time-out.
        None => e.as_db_error().is_none() && source_chain(e).next().is_some(),
    }
}

/// [`describe`], with a hint where the cause is a refused connection or TLS.
fn connect_reason(e: &ConnectError, info: &ConnInfo) -> String {
    let e = match e {
        ConnectError::Tls(why) => return why.clone(),
        ConnectError::Postgres(e) => e,
    };
    let refused = source_chain(e).any(|s| {
        s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    let text = describe(e);
    let ssl = info.ssl_mode().name();
    if refused {
        format!("{text} (is the server running and accepting TCP connections there?)")
    } else if text.contains("no encryption") || text.contains("SSL off") {
        format!(
            "{text} (the server accepts only TLS connections: use sslmode=require or verify-full, not {ssl})"
        )
    } else if text.contains("does not support TLS") {
        format!("{text} (sslmode={ssl} asks for TLS; the server does not offer it)")
    } else {
        text
    }
}

/// The text with every password in it hidden (see [`crate::conninfo::redact`]).
pub fn redact(text: &str) -> String {
    crate::conninfo::redact(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_url_is_one_line_without_the_password() {
        let e = Db::connect("postgres://me:s3cret@db:notaport/x", "test").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("bad database URL 'postgres://me:***@db:notaport/x': "),
            "{text}"
        );
        assert!(!text.contains("s3cret") && !text.contains('\n'), "{text}");
    }

    #[test]
    fn a_refused_connection_is_one_line() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = Db::connect(&format!("postgres://me:pw@127.0.0.1:{port}/x"), "test").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with(&format!(
                "cannot connect to PostgreSQL at 127.0.0.1:{port}/x as me: "
            )),
            "{text}"
        );
        assert!(text.contains("refused") && !text.contains('\n'), "{text}");
    }
}
