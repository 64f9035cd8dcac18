//! Helpers shared by the command-line test files (each includes this with `mod cmdline;`).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// Run the `hotlaunch` binary with `args`: exit code (-1 if killed), stdout, stderr.
pub fn hotlaunch(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(args)
        .output()
        .expect("run hotlaunch");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A fresh, empty temporary directory for test `name` of suite `suite` (per process).
pub fn fresh_dir(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlaunch-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
