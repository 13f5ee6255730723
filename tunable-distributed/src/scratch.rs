//! # Throw-away PostgreSQL clusters
//!
//! For tests and benchmarks (and for trying distributed tuning on one machine): [`Cluster::start`]
//! runs `initdb` into a fresh temporary folder and `pg_ctl start` on a free localhost port, with a
//! superuser `tunable` and a random password (password authentication over TCP, so a wrong one is
//! refused as on a real server). Dropping the [`Cluster`] stops the server and removes the folder;
//! a folder left by a process that was killed is cleaned by the next [`Cluster::start`].
//!
//! The binaries are looked up on `PATH`, then in Debian's `/usr/lib/postgresql/<version>/bin`
//! (the `postgresql` package does not put them on `PATH`). `initdb` refuses to run as root: as
//! root the server runs as the `postgres` user (which Debian's package creates), through
//! `runuser`. Durability is off (`fsync=off`): the data are thrown away anyway.
//!
//! [`Cluster::start_tls`] starts a **TLS-only** cluster instead: a self-signed certificate for
//! `127.0.0.1` made at start with the `openssl` command, `pg_hba.conf` accepting `hostssl` and
//! rejecting every `hostnossl` connection, and URLs with `sslmode=verify-full` and the
//! certificate as `sslrootcert`. [`for_tests`] starts one when `TUNABLE_TEST_TLS=1`, so the same
//! tests run over TLS (CI runs the distributed tests both ways).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why no cluster could be started here (no PostgreSQL installed, no `postgres` user, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no throw-away PostgreSQL cluster: {0}")]
pub struct Unavailable(pub String);

/// A running throw-away cluster.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    run_as: Option<String>,
    port: u16,
    password: String,
    tls: bool,
}

const PREFIX: &str = "tunable-pg-";

impl Cluster {
    /// Creates and starts a cluster accepting plain TCP connections.
    pub fn start() -> Result<Cluster, Unavailable> {
        Cluster::start_mode(false)
    }

    /// Creates and starts a cluster accepting only TLS connections, with a self-signed
    /// certificate for `127.0.0.1` ([`Cluster::root_cert`]).
    pub fn start_tls() -> Result<Cluster, Unavailable> {
        Cluster::start_mode(true)
    }

    fn start_mode(tls: bool) -> Result<Cluster, Unavailable> {
        let bin = find_bin()?;
        let run_as = if running_as_root() {
            Some(unprivileged_user()?)
        } else {
            None
        };
        sweep_stale();
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("{PREFIX}{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Unavailable(format!("{}: {e}", dir.display())))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let password = format!("pw{:x}", nanos ^ (u128::from(std::process::id()) << 64));
        let cluster = Cluster {
            dir,
            bin,
            run_as,
            port: 0,
            password,
            tls,
        };
        cluster.initdb()?;
        if tls {
            cluster.make_tls()?;
        }
        let mut cluster = cluster;
        let mut last = String::new();
        for _ in 0..5 {
            cluster.port = free_port()?;
            match cluster.pg_ctl_start() {
                Ok(()) => return Ok(cluster),
                Err(e) => last = e,
            }
        }
        Err(Unavailable(format!("the server did not start: {last}")))
    }

    /// The URL of `database` on this cluster, as the superuser `tunable` (with
    /// `sslmode=verify-full` and the root certificate on a TLS-only cluster).
    pub fn url(&self, database: &str) -> String {
        self.url_as("tunable", &self.password, database)
    }

    /// The same URL with a wrong password.
    pub fn url_with_wrong_password(&self, database: &str) -> String {
        self.url_as("tunable", &format!("not-{}", self.password), database)
    }

    /// The URL of `database` as `user` with `password` (TLS parameters as [`Cluster::url`]).
    pub fn url_as(&self, user: &str, password: &str, database: &str) -> String {
        format!(
            "postgres://{user}:{password}@127.0.0.1:{}/{database}{}",
            self.port,
            self.tls_query()
        )
    }

    /// `?sslmode=verify-full&sslrootcert=...` on a TLS-only cluster, else nothing.
    pub fn tls_query(&self) -> String {
        match self.root_cert() {
            Some(cert) => format!("?sslmode=verify-full&sslrootcert={}", cert.display()),
            None => String::new(),
        }
    }

    /// The superuser's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The server's self-signed certificate (PEM), on a TLS-only cluster.
    pub fn root_cert(&self) -> Option<PathBuf> {
        self.tls.then(|| self.dir.join("server.crt"))
    }

    /// Whether the cluster accepts only TLS connections.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The port the server listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates a database; answers its URL.
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        let mut client = crate::conninfo::ConnInfo::parse(&self.url("postgres"))
            .map_err(|e| e.to_string())?
            .connect()
            .map_err(|e| match e {
                crate::conninfo::ConnectError::Tls(why) => why,
                crate::conninfo::ConnectError::Postgres(e) => crate::conninfo::describe(&e),
            })?;
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .map_err(|e| crate::conninfo::describe(&e))?;
        Ok(self.url(name))
    }

    /// Stops the server (fast shutdown: sessions are cut), keeping its data.
    pub fn stop(&self) -> Result<(), String> {
        self.pg_ctl(&["stop", "-m", "fast", "-w", "-t", "30"])
            .map(drop)
    }

    /// Starts a stopped server again, on the same port.
    pub fn start_again(&self) -> Result<(), String> {
        self.pg_ctl_start()
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn initdb(&self) -> Result<(), Unavailable> {
        let pwfile = self.dir.join("pw");
        std::fs::write(&pwfile, format!("{}\n", self.password))
            .map_err(|e| Unavailable(format!("{}: {e}", pwfile.display())))?;
        if let Some(user) = &self.run_as {
            chown_to(&self.dir, user)?;
            chown_to(&pwfile, user)?;
        }
        let out = self
            .command(&self.bin.join("initdb"))
            .arg("-D")
            .arg(self.data())
            .args([
                "-U",
                "tunable",
                "-E",
                "UTF8",
                "--no-sync",
                "--auth-local=trust",
            ])
            .args(["--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .map_err(|e| Unavailable(format!("cannot run initdb: {e}")))?;
        check(&out, "initdb").map_err(Unavailable)
    }

    /// A self-signed certificate for 127.0.0.1 and a `pg_hba.conf` that rejects plain TCP.
    fn make_tls(&self) -> Result<(), Unavailable> {
        let key = self.dir.join("server.key");
        let cert = self.dir.join("server.crt");
        let out = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=tunable scratch cluster"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .map_err(|e| Unavailable(format!("cannot run openssl to make a certificate: {e}")))?;
        check(&out, "openssl req").map_err(Unavailable)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Unavailable(format!("{}: {e}", key.display())))?;
        std::fs::set_permissions(&cert, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| Unavailable(format!("{}: {e}", cert.display())))?;
        if let Some(user) = &self.run_as {
            chown_to(&key, user)?;
            chown_to(&cert, user)?;
        }
        let hba = self.data().join("pg_hba.conf");
        std::fs::write(
            &hba,
            "local all all trust\n\
             hostssl all all 127.0.0.1/32 scram-sha-256\n\
             hostnossl all all 0.0.0.0/0 reject\n\
             hostnossl all all ::/0 reject\n",
        )
        .map_err(|e| Unavailable(format!("{}: {e}", hba.display())))
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        if self.tls {
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                self.dir.join("server.crt").display(),
                self.dir.join("server.key").display()
            ));
        }
        let log = self.dir.join("log");
        let r = self.pg_ctl(&[
            "start",
            "-w",
            "-t",
            "30",
            "-l",
            &log.to_string_lossy(),
            "-o",
            &options,
        ]);
        r.map(drop).map_err(|e| {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(3).collect();
            format!(
                "{e} (log: {})",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )
        })
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<Output, String> {
        let out = self
            .command(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(args)
            .output()
            .map_err(|e| format!("cannot run pg_ctl: {e}"))?;
        check(&out, "pg_ctl").map(|()| out)
    }

    fn command(&self, program: &Path) -> Command {
        run_as(program, self.run_as.as_deref())
    }
}

/// `program`, run as `user` (through `runuser`) if given.
fn run_as(program: &Path, user: Option<&str>) -> Command {
    match user {
        None => Command::new(program),
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w", "-t", "30"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A cluster shared by the tests of one process: started by the first caller, stopped when the
/// last holder drops it; TLS-only when `TUNABLE_TEST_TLS=1`. Skips (answers `None`, printing
/// why) where PostgreSQL is unavailable, unless `TUNABLE_REQUIRE` names `postgres`: then it
/// panics.
pub fn for_tests() -> Option<Arc<Cluster>> {
    static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = shared.upgrade() {
        return Some(c);
    }
    let tls = std::env::var("TUNABLE_TEST_TLS").is_ok_and(|v| v == "1");
    match Cluster::start_mode(tls) {
        Ok(c) => {
            if tls {
                eprintln!("tunable: test cluster accepts only TLS (TUNABLE_TEST_TLS=1)");
            }
            let c = Arc::new(c);
            *shared = Arc::downgrade(&c);
            Some(c)
        }
        Err(e) => {
            skip_or_fail(&e);
            None
        }
    }
}

/// Prints why a test skips, or panics if `TUNABLE_REQUIRE` names `postgres`.
pub fn skip_or_fail(why: &Unavailable) {
    let required = std::env::var("TUNABLE_REQUIRE").unwrap_or_default();
    assert!(
        !required.split([' ', ',']).any(|r| r == "postgres"),
        "postgres is required (TUNABLE_REQUIRE={required:?}) but unavailable: {why}"
    );
    eprintln!("skipping: {why}");
}

fn check(out: &Output, what: &str) -> Result<(), String> {
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "{what} failed ({}): {}",
        out.status,
        crate::error::one_line(&text)
    ))
}

/// `initdb`'s folder: on `PATH`, else the newest of Debian's versioned folders.
fn find_bin() -> Result<PathBuf, Unavailable> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file());
    if let Some(d) = on_path {
        // Resolve symbolic links (Debian's /usr/local/bin links) to the real folder.
        return Ok(std::fs::canonicalize(d.join("initdb"))
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .filter(|p| p.join("pg_ctl").is_file())
            .unwrap_or(d));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let v: u32 = e.file_name().to_str()?.parse().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("initdb").is_file().then_some((v, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions.pop().map(|(_, b)| b).ok_or_else(|| {
        Unavailable(
            "initdb is neither on PATH nor in /usr/lib/postgresql/*/bin (install Debian's `postgresql`)"
                .to_owned(),
        )
    })
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The user a root process runs the server as: `postgres`, if it exists and `runuser` is there.
fn unprivileged_user() -> Result<String, Unavailable> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    if !passwd.lines().any(|l| l.starts_with("postgres:")) {
        return Err(Unavailable(
            "running as root, and there is no `postgres` user to run the server as".to_owned(),
        ));
    }
    let runuser = Command::new("runuser").arg("--help").output();
    if runuser.is_err() {
        return Err(Unavailable(
            "running as root, and `runuser` (util-linux) is missing".to_owned(),
        ));
    }
    Ok("postgres".to_owned())
}

fn chown_to(path: &Path, user: &str) -> Result<(), Unavailable> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let ids = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user) && f.len() > 3)
            .then(|| Some((f[2].parse::<u32>().ok()?, f[3].parse::<u32>().ok()?)))
            .flatten()
    });
    let (uid, gid) = ids.ok_or_else(|| Unavailable(format!("no uid for user {user}")))?;
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .map_err(|e| Unavailable(format!("cannot hand {} to {user}: {e}", path.display())))
}

fn free_port() -> Result<u16, Unavailable> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Unavailable(format!("no free localhost port: {e}")))
}

/// Stops and removes clusters whose creating process is gone (killed before dropping them).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let data = e.path().join("data");
        let pg_ctl = find_bin().map(|b| b.join("pg_ctl"));
        if let (Ok(pg_ctl), true) = (pg_ctl, data.is_dir()) {
            let user = running_as_root().then_some("postgres");
            let _ = run_as(&pg_ctl, user)
                .arg("-D")
                .arg(&data)
                .args(["stop", "-m", "immediate", "-w", "-t", "10"])
                .output();
        }
        std::thread::sleep(Duration::from_millis(10));
        let _ = std::fs::remove_dir_all(e.path());
    }
}
