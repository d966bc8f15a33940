//! Masking a SQLite database in place: the stores agents keep besides their transcripts
//! (Codex's `state_*.sqlite` and `thread_history_*.sqlite`, Copilot's `session-store.db`)
//! hold tool outputs and prompts too.
//!
//! The database is changed through SQLite itself, never byte by byte: every text value (and
//! every blob that is UTF-8 text) of every ordinary table is masked by value like a file's
//! lines, and written back with `UPDATE … WHERE rowid = ?` in one transaction. Full-text
//! tables are updated through the virtual table, so their index drops the old words; their
//! shadow tables are left to it. With `secure_delete` on, SQLite zeroes what an update frees;
//! afterwards `VACUUM` rewrites the file and a `TRUNCATE` checkpoint empties the write-ahead
//! log, so no old page keeps a secret. A database an agent holds locked is an error (run
//! again when the agent is idle); nothing is changed then.

use super::{Change, Error};
use crate::filter::Masking;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first bytes of every SQLite 3 database file.
pub const MAGIC: &[u8] = b"SQLite format 3\0";

/// A copy of a database and its write-ahead log in a private folder of its own (0700),
/// removed when dropped.
struct DryCopy {
    dir: PathBuf,
    db: PathBuf,
}

impl DryCopy {
    fn of(path: &Path) -> std::io::Result<DryCopy> {
        use std::os::unix::fs::DirBuilderExt;
        let salt = crate::model::random_salt();
        let tag: String = salt.iter().map(|b| format!("{b:02x}")).collect();
        let dir = std::env::temp_dir().join(format!("leakhound-scrub-{tag}"));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let copy = DryCopy {
            db: dir.join("db"),
            dir,
        };
        std::fs::copy(path, &copy.db)?;
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        if wal.is_file() {
            std::fs::copy(&wal, copy.dir.join("db-wal"))?;
        }
        Ok(copy)
    }
}

impl Drop for DryCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What masking one database changed: per row, `table:rowid` and the rules.
#[derive(Debug, Default)]
pub struct Rows {
    pub changes: Vec<(String, Change)>,
    /// Tables that could not be read or written, and why (the others were masked).
    pub errors: Vec<String>,
}

/// The ordinary and virtual tables to mask: not SQLite's own, and not the shadow tables of a
/// virtual table (a full-text index keeps its words there; it is updated through the table).
fn tables(db: &Connection) -> rusqlite::Result<Vec<(String, bool)>> {
    let mut stmt =
        db.prepare("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'")?;
    let all: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let virtuals: Vec<&str> = all
        .iter()
        .filter(|(_, sql)| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL TABLE"))
        .map(|(n, _)| n.as_str())
        .collect();
    Ok(all
        .iter()
        .filter(|(n, _)| !n.starts_with("sqlite_"))
        .filter(|(n, _)| {
            !virtuals
                .iter()
                .any(|v| n != v && n.starts_with(&format!("{v}_")))
        })
        .map(|(n, sql)| (n.clone(), virtuals.contains(&n.as_str()) || sql.is_empty()))
        .collect())
}

fn quoted(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// The text a value holds, if any: TEXT, or a BLOB that is UTF-8.
fn text_of(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Text(t) => Some(t.as_bytes()),
        Value::Blob(b) if std::str::from_utf8(b).is_ok() => Some(b),
        _ => None,
    }
}

/// One table's rows: rowid and every column's value.
type Table = (Vec<String>, Vec<(i64, Vec<Value>)>);

fn read_table(db: &Connection, table: &str) -> rusqlite::Result<Table> {
    let mut stmt = db.prepare(&format!("SELECT rowid, * FROM {}", quoted(table)))?;
    let columns: Vec<String> = stmt.column_names().skip(1).map(|c| c.to_string()).collect();
    let n = columns.len();
    let rows = stmt
        .query_map([], |r| {
            let rowid: i64 = r.get(0)?;
            let vals = (1..=n)
                .map(|i| r.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((rowid, vals))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((columns, rows))
}

/// Mask a value's text: as JSON when it is JSON (so it stays JSON), else as text. The masked
/// bytes and the rules, or None when nothing changed.
fn mask(masking: &Masking, name: &str, text: &[u8]) -> Option<(Vec<u8>, Vec<String>)> {
    let m = match masking.json(name, text) {
        Some(m) => m,
        None => masking.text(name, text),
    };
    if m.bytes == text {
        return None;
    }
    let mut rules: Vec<String> = m.findings.iter().map(|f| f.rule_id.clone()).collect();
    if rules.is_empty() {
        rules.push("known-value".into()); // masked only where a value found elsewhere repeats
    }
    rules.sort();
    rules.dedup();
    Some((m.bytes, rules))
}

/// Mask the database at `path` (see the module's description); `dry_run` reports what would
/// change and writes nothing.
pub fn scrub_db(masking: &Masking, path: &Path, dry_run: bool) -> Result<Rows, Error> {
    let name = path.display().to_string();
    let sql_err = |e: rusqlite::Error| Error::Io {
        path: name.clone(),
        source: std::io::Error::other(format!("SQLite: {e}")),
    };
    // A dry run reads a private copy: even a read-only open of a database with a write-ahead
    // log makes SQLite create files beside it.
    let copy = if dry_run {
        Some(DryCopy::of(path).map_err(|source| Error::Io {
            path: name.clone(),
            source,
        })?)
    } else {
        None
    };
    let target = copy.as_ref().map_or(path, |c| c.db.as_path());
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut db = Connection::open_with_flags(target, flags).map_err(sql_err)?;
    db.busy_timeout(Duration::from_secs(2)).map_err(sql_err)?;
    let tables = tables(&db).map_err(sql_err)?;
    let mut rows = Rows::default();
    let mut contents = Vec::new();
    for (table, _) in &tables {
        match read_table(&db, table) {
            Ok(t) => contents.push((table.clone(), t)),
            Err(e) => rows.errors.push(format!("table {table}: {e}")),
        }
    }
    // By value: every value of every table is learned before any is masked.
    for (_, (_, data)) in &contents {
        for (_, vals) in data {
            for t in vals.iter().filter_map(text_of) {
                masking.learn(t);
            }
        }
    }
    let tx = db.transaction().map_err(sql_err)?;
    if !dry_run {
        tx.pragma_update(None, "secure_delete", "ON")
            .map_err(sql_err)?;
    }
    for (table, (columns, data)) in &contents {
        for (rowid, vals) in data {
            for (col, v) in columns.iter().zip(vals) {
                let Some(text) = text_of(v) else { continue };
                let Some((masked, rules)) = mask(masking, &name, text) else {
                    continue;
                };
                if !dry_run {
                    let new = match v {
                        Value::Blob(_) => Value::Blob(masked),
                        _ => Value::Text(String::from_utf8_lossy(&masked).into_owned()),
                    };
                    let sql = format!(
                        "UPDATE {} SET {} = ?1 WHERE rowid = ?2",
                        quoted(table),
                        quoted(col)
                    );
                    if let Err(e) = tx.execute(&sql, rusqlite::params![new, rowid]) {
                        rows.errors.push(format!("table {table}: {e}"));
                        continue;
                    }
                }
                for rule_id in rules {
                    let line = usize::try_from(*rowid).unwrap_or(0);
                    rows.changes.push((table.clone(), Change { line, rule_id }));
                }
            }
        }
    }
    if dry_run || rows.changes.is_empty() {
        tx.rollback().map_err(sql_err)?;
        return Ok(rows);
    }
    // A full-text index records an update as a deletion beside the old words; merging its
    // segments drops them. (A virtual table that is not FTS refuses the command: nothing to do.)
    for (table, _) in tables.iter().filter(|(_, virt)| *virt) {
        if rows.changes.iter().any(|(t, _)| t == table) {
            let q = quoted(table);
            let _ = tx.execute(&format!("INSERT INTO {q}({q}) VALUES('optimize')"), []);
        }
    }
    tx.commit().map_err(sql_err)?;
    // The old values may still be in freed pages and in the write-ahead log: rewrite the file
    // and empty the log.
    db.execute_batch("VACUUM").map_err(sql_err)?;
    let _: (i64, i64, i64) = db
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(sql_err)?;
    Ok(rows)
}
