//! # Database roles
//!
//! Who may do what in the shared database. [`setup`] (`cargo tunable study setup-roles`, run by
//! the owner of the `tunable` schema, e.g. the superuser that first connected) creates two
//! group roles without login and grants them what their commands need, nothing more:
//!
//! | role | may | may not |
//! | --- | --- | --- |
//! | [`COORDINATOR`] | create, coordinate, export and delete studies: read and write studies, events, jobs and results; read the worker pool | change the schema |
//! | [`WORKER`] | read studies; claim jobs (update their state, lease and holder); record results; register in the worker pool | create, alter or delete studies; create jobs; change a job's configuration; change the schema |
//!
//! Everyone else (`PUBLIC`) gets nothing in the schema. People and machines log in as their own
//! roles, members of one of these (`--grant-worker NAME` / `--grant-coordinator NAME` grant the
//! membership to roles that exist; `CREATE ROLE node3 LOGIN PASSWORD '...' IN ROLE
//! tunable_worker` makes one). Run it again after upgrading tunable: a migration may add tables.
//!
//! A worker role still decides the results it records: a worker host is trusted for its
//! measurements (see the guide's security chapter).

use crate::db::Db;
use crate::error::DistError;

/// The group role of study owners: coordinators, `study create`, `export`, `delete`.
pub const COORDINATOR: &str = "tunable_coordinator";
/// The group role of workers.
pub const WORKER: &str = "tunable_worker";

/// The privileges, as SQL. Idempotent: run as often as needed.
const GRANTS: &str = r"
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tunable_coordinator') THEN
        CREATE ROLE tunable_coordinator NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tunable_worker') THEN
        CREATE ROLE tunable_worker NOLOGIN;
    END IF;
END $$;
REVOKE ALL ON SCHEMA tunable FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA tunable FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA tunable FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA tunable FROM tunable_coordinator, tunable_worker;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA tunable FROM tunable_coordinator, tunable_worker;
GRANT USAGE ON SCHEMA tunable TO tunable_coordinator, tunable_worker;
GRANT SELECT ON tunable.schema_version TO tunable_coordinator, tunable_worker;

GRANT SELECT, INSERT, UPDATE, DELETE
    ON tunable.studies, tunable.events, tunable.jobs, tunable.results TO tunable_coordinator;
GRANT SELECT ON tunable.workers TO tunable_coordinator;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA tunable TO tunable_coordinator;

GRANT SELECT ON tunable.studies TO tunable_worker;
GRANT SELECT ON tunable.jobs TO tunable_worker;
GRANT UPDATE (state, attempts, worker, device, claimed_at, lease_until)
    ON tunable.jobs TO tunable_worker;
GRANT SELECT, INSERT ON tunable.results TO tunable_worker;
GRANT USAGE ON SEQUENCE tunable.results_recorded_seq TO tunable_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON tunable.workers TO tunable_worker;
";

/// `name` quoted as an SQL identifier; `Err` if it cannot be a role's name.
fn identifier(name: &str) -> Result<String, DistError> {
    if name.is_empty() || name.len() > 63 || name.chars().any(char::is_control) {
        return Err(DistError::BadStudy {
            reason: format!(
                "{name:?} cannot be a role's name (1 to 63 characters, no control characters)"
            ),
        });
    }
    Ok(format!("\"{}\"", name.replace('"', "\"\"")))
}

/// Creates the roles [`COORDINATOR`] and [`WORKER`] if missing, (re)grants their privileges, and
/// makes the existing roles `coordinators` and `workers` members of them. Run by the schema's
/// owner.
pub fn setup(db: &mut Db, coordinators: &[String], workers: &[String]) -> Result<(), DistError> {
    let mut sql = GRANTS.to_owned();
    for (group, members) in [(COORDINATOR, coordinators), (WORKER, workers)] {
        for m in members {
            sql.push_str(&format!("GRANT {group} TO {};\n", identifier(m)?));
        }
    }
    db.retry("setting up the roles", |c| {
        let mut tx = c.transaction()?;
        tx.batch_execute(&sql)?;
        tx.commit()
    })
    .map_err(|e| match e {
        DistError::Database { doing, reason } if reason.contains("permission denied") || reason.contains("must be owner") => {
            DistError::Database {
                doing,
                reason: format!(
                    "{reason} (run it as the owner of the tunable schema, e.g. the superuser that first connected)"
                ),
            }
        }
        e => e,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn role_names_are_quoted_identifiers() {
        assert_eq!(super::identifier("node3").unwrap(), "\"node3\"");
        assert_eq!(
            super::identifier("a\"; DROP TABLE x; --").unwrap(),
            "\"a\"\"; DROP TABLE x; --\""
        );
        assert!(super::identifier("").is_err());
        assert!(super::identifier("a\nb").is_err());
        assert!(super::identifier(&"x".repeat(64)).is_err());
    }
}
