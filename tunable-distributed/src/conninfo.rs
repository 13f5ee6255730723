//! # Connection parameters, as every PostgreSQL client reads them
//!
//! [`ConnInfo::parse`] reads a connection string the way libpq (and so `psql`) does, so that a
//! database `psql` reaches is reached the same way by `cargo tunable`:
//!
//! - the string is a URL (`postgres://user@host:port/database?sslmode=verify-full`) or
//!   `key=value` pairs (`host=db user=tuner sslmode=require`), and may be **empty**: then
//!   everything comes from the environment;
//! - what the string leaves out comes from libpq's environment variables: `PGHOST`, `PGPORT`,
//!   `PGUSER` (default: the operating-system user), `PGDATABASE` (default: the user),
//!   `PGPASSWORD`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGCONNECT_TIMEOUT`; without a host, the Unix
//!   socket in `/var/run/postgresql` (Debian's) if there is one, else `localhost`;
//! - a password given neither in the string nor in `PGPASSWORD` is looked up in the password
//!   file, `PGPASSFILE` or `~/.pgpass` (`host:port:database:user:password` lines, `*` matching
//!   anything; a file others can read is ignored, with a warning, as libpq does);
//! - **TLS** follows `sslmode`: `disable` (never), `prefer` (the default: TLS if the server
//!   offers it, without checking its certificate), `require` (TLS or no connection; the
//!   certificate is checked as for `verify-ca` when a root certificate is given), `verify-ca`
//!   (the server's certificate must chain to the root certificate), `verify-full` (and name the
//!   host connected to). The root certificate is `sslrootcert` (a PEM file, or `system` for the
//!   system's store), else `PGSSLROOTCERT`, else `~/.postgresql/root.crt`; `verify-ca` and
//!   `verify-full` without one are refused before connecting.
//!
//! TLS goes through the system's OpenSSL (`native-tls`), as libpq's own does: the same library,
//! certificate formats and system trust store as `psql` on the same machine, a library already on
//! every machine with a PostgreSQL client, and no C or assembly of a crypto provider to compile
//! (rustls needs `ring`, built from C, or `aws-lc-rs`, which needs cmake). Its cost: OpenSSL's
//! headers (`libssl-dev`) at build time and `libssl` at run time.
//!
//! [`redact`] removes passwords from any text that may hold a connection string, in every form
//! libpq accepts: URL user info (`user:secret@`), a URL parameter (`?password=secret`), a
//! `password = secret` pair with or without spaces, and quoted passwords (`password='a b'`).
//! `describe` gives the client's errors, connecting's first, in one line with the password so
//! removed.

use crate::error::{DistError, one_line};
use native_tls::{Certificate, TlsConnector};
use postgres::Config;
use postgres::config::{Host, SslMode as WireSslMode};
use postgres_native_tls::MakeTlsConnector;
use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a connection uses TLS (libpq's `sslmode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Never.
    Disable,
    /// TLS if the server offers it, else plain; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is checked only if a root certificate is given.
    Require,
    /// TLS, with a certificate that chains to the root certificate.
    VerifyCa,
    /// TLS, with a certificate that chains to the root certificate and names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(
                    "sslmode=allow is not supported (use prefer, require, verify-ca or verify-full)"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "sslmode={other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    /// Its name, as in a connection string.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the certificates a server's must chain to come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootCert {
    /// A PEM file of one or more certificates (only these are trusted).
    File(PathBuf),
    /// The system's trust store (`sslrootcert=system`).
    System,
}

/// A parsed connection string with the environment's defaults applied, ready to connect.
#[derive(Clone)]
pub struct ConnInfo {
    config: Config,
    ssl: SslMode,
    root: Option<RootCert>,
}

impl std::fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnInfo")
            .field("target", &target(&self.config))
            .field("ssl", &self.ssl)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// Where environment variables come from: the process's, or a map in tests.
pub(crate) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl ConnInfo {
    /// Parses `text` (a URL, `key=value` pairs, or empty) with the defaults of this process's
    /// environment and password file. `Err` is [`DistError::BadUrl`], the text redacted.
    pub fn parse(text: &str) -> Result<ConnInfo, DistError> {
        ConnInfo::parse_with(text, &process_env)
    }

    pub(crate) fn parse_with(text: &str, env: Env<'_>) -> Result<ConnInfo, DistError> {
        let bad = |reason: String| DistError::BadUrl {
            url: redact(text),
            reason: redact(&reason),
        };
        let (rest, ssl, root) = split_tls(text).map_err(bad)?;
        let mut config: Config = if rest.trim().is_empty() {
            Config::new()
        } else {
            rest.parse()
                .map_err(|e: postgres::Error| bad(describe(&e)))?
        };
        if config.get_hosts().is_empty() {
            match env("PGHOST") {
                Some(hosts) => {
                    for h in hosts.split(',') {
                        config.host(h);
                    }
                }
                None if Path::new("/var/run/postgresql").is_dir() => {
                    config.host("/var/run/postgresql");
                }
                None => {
                    config.host("localhost");
                }
            }
        }
        if config.get_ports().is_empty()
            && let Some(port) = env("PGPORT")
        {
            for p in port.split(',') {
                let p: u16 = p
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("PGPORT={port:?} is not a port")))?;
                config.port(p);
            }
        }
        if config.get_user().is_none() {
            match env("PGUSER").or_else(|| os_user(env)) {
                Some(u) => config.user(&u),
                None => {
                    return Err(bad(
                        "no user: give one in the connection string or PGUSER".to_owned()
                    ));
                }
            };
        }
        if config.get_dbname().is_none()
            && let Some(d) = env("PGDATABASE")
        {
            config.dbname(&d);
        }
        if config.get_password().is_none() {
            if let Some(pw) = env("PGPASSWORD") {
                config.password(pw);
            } else if let Some(pw) = from_passfile(&config, env) {
                config.password(pw);
            }
        }
        if config.get_connect_timeout().is_none() {
            let secs = env("PGCONNECT_TIMEOUT")
                .and_then(|t| t.trim().parse::<u64>().ok())
                .filter(|t| *t > 0)
                .unwrap_or(10);
            config.connect_timeout(Duration::from_secs(secs));
        }
        let ssl = match ssl {
            Some(s) => s,
            None => match env("PGSSLMODE") {
                Some(s) => SslMode::parse(&s).map_err(|e| bad(format!("PGSSLMODE: {e}")))?,
                None => SslMode::Prefer,
            },
        };
        let root = root
            .or_else(|| env("PGSSLROOTCERT"))
            .map(|r| {
                if r == "system" {
                    RootCert::System
                } else {
                    RootCert::File(PathBuf::from(r))
                }
            })
            .or_else(|| {
                let default = home(env)?.join(".postgresql/root.crt");
                default.is_file().then_some(RootCert::File(default))
            });
        if matches!(ssl, SslMode::VerifyCa | SslMode::VerifyFull) && root.is_none() {
            return Err(bad(format!(
                "sslmode={} needs a root certificate: give sslrootcert=FILE (or PGSSLROOTCERT), put it in ~/.postgresql/root.crt, or give sslrootcert=system for the system's store",
                ssl.name()
            )));
        }
        Ok(ConnInfo { config, ssl, root })
    }

    /// Names the connection on the server (`pg_stat_activity.application_name`).
    pub fn set_application(&mut self, name: &str) {
        self.config.application_name(name);
    }

    /// How the connection uses TLS.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl
    }

    /// `host:port/database as user`, for messages.
    pub fn target(&self) -> String {
        target(&self.config)
    }

    /// Connects. `Err` is one line, naming neither password nor connection string.
    pub fn connect(&self) -> Result<postgres::Client, ConnectError> {
        let mut config = self.config.clone();
        if self.ssl == SslMode::Disable {
            config.ssl_mode(WireSslMode::Disable);
            return config
                .connect(postgres::NoTls)
                .map_err(ConnectError::Postgres);
        }
        config.ssl_mode(if self.ssl == SslMode::Prefer {
            WireSslMode::Prefer
        } else {
            WireSslMode::Require
        });
        let tls = self.connector().map_err(ConnectError::Tls)?;
        config.connect(tls).map_err(ConnectError::Postgres)
    }

    /// The TLS connector of this connection's `sslmode` and root certificate.
    fn connector(&self) -> Result<MakeTlsConnector, String> {
        let mut b = TlsConnector::builder();
        // What is checked: prefer never checks, require only with a root certificate (as libpq).
        let (chain, host) = match (self.ssl, &self.root) {
            (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => (false, false),
            (SslMode::Require | SslMode::VerifyCa, Some(_)) => (true, false),
            (SslMode::VerifyCa, None) => (true, false),
            (SslMode::VerifyFull, _) => (true, true),
        };
        b.danger_accept_invalid_certs(!chain);
        b.danger_accept_invalid_hostnames(!host);
        if chain && let Some(RootCert::File(path)) = &self.root {
            b.disable_built_in_roots(true);
            for cert in read_pem_certificates(path)? {
                b.add_root_certificate(cert);
            }
        }
        b.build()
            .map(MakeTlsConnector::new)
            .map_err(|e| format!("cannot set up TLS: {e}"))
    }
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The TLS settings cannot be used (e.g. an unreadable root certificate).
    Tls(String),
    /// The client's error (network, TLS handshake, authentication, server).
    Postgres(postgres::Error),
}

/// The certificates of a PEM file, each block separately (OpenSSL reads only a file's first).
fn read_pem_certificates(path: &Path) -> Result<Vec<Certificate>, String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the root certificate {}: {e}", path.display()))?;
    let mut certs = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find(BEGIN) {
        let Some(len) = rest[start..].find(END) else {
            break;
        };
        let block = &rest[start..start + len + END.len()];
        certs.push(Certificate::from_pem(block.as_bytes()).map_err(|e| {
            format!(
                "the root certificate file {} holds a bad certificate: {e}",
                path.display()
            )
        })?);
        rest = &rest[start + len + END.len()..];
    }
    if certs.is_empty() {
        return Err(format!(
            "the root certificate file {} holds no PEM certificate",
            path.display()
        ));
    }
    Ok(certs)
}

/// Splits `sslmode` and `sslrootcert` off a connection string (the client library knows neither
/// `verify-*` nor root certificates): the rest of the string, and the two values if given.
fn split_tls(text: &str) -> Result<(String, Option<SslMode>, Option<String>), String> {
    let mut ssl = None;
    let mut root = None;
    let mut take = |key: &str, value: String| -> Result<bool, String> {
        match key {
            "sslmode" => {
                ssl = Some(SslMode::parse(&value)?);
                Ok(true)
            }
            "sslrootcert" => {
                root = Some(value);
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let trimmed = text.trim();
    if trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://") {
        let Some((base, query)) = trimmed.split_once('?') else {
            return Ok((trimmed.to_owned(), None, None));
        };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(&percent_decode(k), percent_decode(v))? {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((rest, ssl, root));
    }
    let mut kept = Vec::new();
    for (k, v) in key_values(trimmed)? {
        if !take(&k, v.clone())? {
            kept.push(format!(
                "{k}='{}'",
                v.replace('\\', "\\\\").replace('\'', "\\'")
            ));
        }
    }
    Ok((kept.join(" "), ssl, root))
}

/// The pairs of a `key = value` connection string (values quoted with `'`, `\` escaping).
fn key_values(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("expected '=' after {key:?}"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("unterminated quoted value of {key:?}")),
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn home(env: Env<'_>) -> Option<PathBuf> {
    env("HOME").map(PathBuf::from)
}

/// The operating-system user's name: `USER`, `LOGNAME`, else `/etc/passwd`'s entry of this uid.
fn os_user(env: Env<'_>) -> Option<String> {
    if let Some(u) = env("USER").or_else(|| env("LOGNAME")) {
        return Some(u);
    }
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 2 && f[2].parse() == Ok(uid)).then(|| f[0].to_owned())
        })
}

/// The password of the password file's first line matching the connection.
fn from_passfile(config: &Config, env: Env<'_>) -> Option<String> {
    let path = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| Some(home(env)?.join(".pgpass")))?;
    let meta = std::fs::metadata(&path).ok()?;
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "tunable: warning: password file {} has group or world access; it is ignored (chmod 0600 it)",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(_)) | None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_owned();
    let db = config
        .get_dbname()
        .map_or_else(|| user.clone(), str::to_owned);
    passfile_lookup(&text, [&host, &port, &db, &user])
}

/// The password of the first line of a password file whose first four fields match `wanted`
/// (host, port, database, user; `*` matches anything).
fn passfile_lookup(text: &str, wanted: [&String; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let fields = passfile_fields(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4..].join(":"))
        })
}

/// A password-file line's fields: `:` separates, `\` escapes.
fn passfile_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one").extend(chars.next()),
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one").push(c),
        }
    }
    fields
}

/// `host:port/database as user` of a configuration.
pub(crate) fn target(config: &Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            match h {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
            }
        })
        .collect();
    let user = config
        .get_user()
        .map_or_else(|| "the current user".to_owned(), str::to_owned);
    let db = config.get_dbname().unwrap_or(user.as_str());
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_owned()
    } else {
        hosts.join(",")
    };
    format!("{hosts}/{db} as {user}")
}

/// `text` with every password in it replaced by `***`: URL user info (`user:secret@host`), URL
/// parameters (`password=secret`), `password = secret` pairs (spaces around `=` or not, the
/// value quoted or not).
pub fn redact(text: &str) -> String {
    let text = redact_userinfo(text);
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password") {
        let start = i + found;
        let mut j = start + "password".len();
        let after_key = j;
        let bytes = text.as_bytes();
        // A key standing alone: not part of a longer word before it.
        let alone = start == 0 || !is_word(bytes[start - 1]);
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        if !alone || j >= bytes.len() || bytes[j] != b'=' {
            out.push_str(&text[i..after_key]);
            i = after_key;
            continue;
        }
        j += 1;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        out.push_str(&text[i..j]);
        out.push_str("***");
        // The value's end: a closing quote, or whitespace / `&` / `;`.
        let end = if j < bytes.len() && (bytes[j] == b'\'' || bytes[j] == b'"') {
            let quote = bytes[j];
            let mut k = j + 1;
            while k < bytes.len() && bytes[k] != quote {
                if bytes[k] == b'\\' {
                    k += 1;
                }
                k += 1;
            }
            (k + 1).min(bytes.len())
        } else {
            let mut k = j;
            while k < bytes.len() && !matches!(bytes[k], b' ' | b'\t' | b'\n' | b'&' | b';' | b',')
            {
                k += 1;
            }
            k
        };
        i = end;
    }
    out.push_str(&text[i..]);
    out
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Replaces the password of every `scheme://user:password@` in `text`.
fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let auth_end = tail
            .find(|c: char| c == '/' || c == '?' || c.is_whitespace() || c == '\'')
            .unwrap_or(tail.len());
        match tail[..auth_end].rfind('@') {
            Some(at) => match tail[..at].find(':') {
                Some(colon) => {
                    out.push_str(&tail[..=colon]);
                    out.push_str("***");
                    out.push_str(&tail[at..auth_end]);
                }
                None => out.push_str(&tail[..auth_end]),
            },
            None => out.push_str(&tail[..auth_end]),
        }
        rest = &tail[auth_end..];
    }
    out.push_str(rest);
    out
}

/// Names of the environment variables that carry database credentials or addresses: every `PG*`
/// variable of libpq, `DATABASE_URL` and `TUNABLE_DB`. Child processes (harnesses, builds,
/// evaluations) are started without them.
pub fn is_credential_var(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with("PG") || name == "DATABASE_URL" || name == "TUNABLE_DB"
}

/// Removes every [credential variable](is_credential_var) of this process from `command`'s
/// environment.
pub fn scrub(command: &mut std::process::Command) -> &mut std::process::Command {
    for (name, _) in std::env::vars_os() {
        if is_credential_var(&name) {
            command.env_remove(&name);
        }
    }
    command
}

/// The causes of a client error, outermost first.
pub(crate) fn source_chain(
    e: &postgres::Error,
) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    let mut chain = Vec::new();
    let mut next = e.source();
    while let Some(cause) = next {
        chain.push(cause);
        next = cause.source();
    }
    chain.into_iter()
}

/// One line describing a client error: the server's message, or the error and its causes.
pub(crate) fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return redact(&one_line(db.message()));
    }
    let mut text = e.to_string();
    for cause in source_chain(e) {
        text.push_str(": ");
        text.push_str(&cause.to_string());
    }
    redact(&one_line(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> HashMap<String, String> {
        vars.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn parse(text: &str, vars: &[(&str, &str)]) -> Result<ConnInfo, DistError> {
        let map = with(vars);
        ConnInfo::parse_with(text, &move |k| map.get(k).cloned())
    }

    #[test]
    fn redact_hides_every_password_form() {
        let cases = [
            (
                "postgres://me:s3cret@db.example:5433/tuning",
                "postgres://me:***@db.example:5433/tuning",
            ),
            ("postgresql://me@db/tuning", "postgresql://me@db/tuning"),
            (
                "host=db user=me password=s3cret dbname=t",
                "host=db user=me password=*** dbname=t",
            ),
            (
                "postgres://db/t?user=me&password=s3cret&sslmode=require",
                "postgres://db/t?user=me&password=***&sslmode=require",
            ),
            (
                "host=db password = s3cret user=me",
                "host=db password = *** user=me",
            ),
            (
                "host=db password='s3 cr\\'et' user=me",
                "host=db password=*** user=me",
            ),
            ("bad URL 'PASSWORD=\"a b\"': x", "bad URL 'PASSWORD=***': x"),
        ];
        for (text, want) in cases {
            let got = redact(text);
            assert_eq!(got, want, "{text}");
            assert!(!got.contains("s3") && !got.contains("a b"), "{got}");
        }
        // Words that merely contain the key are left alone.
        assert_eq!(redact("nopassword=x"), "nopassword=x");
    }

    #[test]
    fn the_environment_fills_what_the_string_leaves_out() {
        let c = parse(
            "",
            &[
                ("PGHOST", "db.lab"),
                ("PGPORT", "6543"),
                ("PGUSER", "tuner"),
                ("PGDATABASE", "tuning"),
                ("PGPASSWORD", "pw"),
                ("PGSSLMODE", "require"),
            ],
        )
        .unwrap();
        assert_eq!(c.target(), "db.lab:6543/tuning as tuner");
        assert_eq!(c.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(c.ssl_mode(), SslMode::Require);
        // The string wins over the environment.
        let c = parse(
            "postgres://me:mine@h:1/d?sslmode=disable",
            &[
                ("PGHOST", "db.lab"),
                ("PGUSER", "tuner"),
                ("PGPASSWORD", "pw"),
                ("PGSSLMODE", "require"),
            ],
        )
        .unwrap();
        assert_eq!(c.target(), "h:1/d as me");
        assert_eq!(c.config.get_password(), Some(&b"mine"[..]));
        assert_eq!(c.ssl_mode(), SslMode::Disable);
        // The default is prefer, and the user defaults to the system's.
        let c = parse("host=h", &[("USER", "alice")]).unwrap();
        assert_eq!(c.ssl_mode(), SslMode::Prefer);
        assert_eq!(c.target(), "h:5432/alice as alice");
    }

    #[test]
    fn verify_modes_take_a_root_certificate_and_refuse_without_one() {
        let c = parse(
            "host=h user=u sslmode=verify-full sslrootcert='/etc/ca.pem'",
            &[],
        )
        .unwrap();
        assert_eq!(c.ssl_mode(), SslMode::VerifyFull);
        assert_eq!(c.root, Some(RootCert::File("/etc/ca.pem".into())));
        let c = parse("postgres://u@h/d?sslmode=verify-ca&sslrootcert=system", &[]).unwrap();
        assert_eq!(
            (c.ssl_mode(), c.root),
            (SslMode::VerifyCa, Some(RootCert::System))
        );
        let c = parse(
            "postgres://u@h/d",
            &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", "/r.pem")],
        )
        .unwrap();
        assert_eq!(c.root, Some(RootCert::File("/r.pem".into())));
        let e = parse(
            "postgres://u:pw@h/d?sslmode=verify-full",
            &[("HOME", "/nonexistent")],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("sslmode=verify-full needs a root certificate") && !e.contains("pw@"),
            "{e}"
        );
        let e = parse("host=h user=u password=s3cret sslmode=bogus", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not one of disable") && !e.contains("s3cret"),
            "{e}"
        );
        let e = parse("host=h user=u", &[("PGSSLMODE", "allow")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("allow is not supported"), "{e}");
    }

    #[test]
    fn key_values_keep_quotes_and_escapes_through_the_split() {
        let (rest, ssl, root) =
            split_tls("host=h password='a b\\'c' sslmode = require sslrootcert='/x y'").unwrap();
        assert_eq!(ssl, Some(SslMode::Require));
        assert_eq!(root.as_deref(), Some("/x y"));
        let c: Config = rest.parse().unwrap();
        assert_eq!(c.get_password(), Some(&b"a b'c"[..]));
    }

    #[test]
    fn the_password_file_is_read_as_libpq_reads_it() {
        let text = "# comment\n\
                    other:5432:*:tuner:wrong\n\
                    db.lab:6543:tuning:tuner:pa\\:ss\n\
                    *:*:*:*:fallback\n";
        let s = |v: &str| v.to_owned();
        assert_eq!(
            passfile_lookup(text, [&s("db.lab"), &s("6543"), &s("tuning"), &s("tuner")]),
            Some("pa:ss".to_owned())
        );
        assert_eq!(
            passfile_lookup(text, [&s("x"), &s("1"), &s("y"), &s("z")]),
            Some("fallback".to_owned())
        );
        // Through the environment: PGPASSFILE, used only without another password, and only if
        // private.
        let dir = std::env::temp_dir().join(format!("tunable-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(&file, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let f = file.to_str().unwrap();
        let c = parse("postgres://tuner@db.lab:6543/tuning", &[("PGPASSFILE", f)]).unwrap();
        assert_eq!(c.config.get_password(), Some(&b"pa:ss"[..]));
        let c = parse(
            "postgres://tuner@db.lab:6543/tuning",
            &[("PGPASSFILE", f), ("PGPASSWORD", "env")],
        )
        .unwrap();
        assert_eq!(c.config.get_password(), Some(&b"env"[..]));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = parse("postgres://tuner@db.lab:6543/tuning", &[("PGPASSFILE", f)]).unwrap();
        assert_eq!(c.config.get_password(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn credential_variables_are_named() {
        for v in [
            "PGPASSWORD",
            "PGHOST",
            "PGPASSFILE",
            "DATABASE_URL",
            "TUNABLE_DB",
        ] {
            assert!(is_credential_var(v.as_ref()), "{v}");
        }
        for v in ["PATH", "TUNABLE_DEVICE", "HOME"] {
            assert!(!is_credential_var(v.as_ref()), "{v}");
        }
    }
}
