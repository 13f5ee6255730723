//! # Process identity
//!
//! How coordinators and workers name themselves in the database and in messages: `host:pid`.

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`).
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// `host:pid` of this process.
pub fn me() -> String {
    format!("{}:{}", host(), std::process::id())
}
