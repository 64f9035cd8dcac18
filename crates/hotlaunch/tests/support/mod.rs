//! Shared by the `reproduce_<paper>` smoke tests.

use hotlaunch::reproduce::Check;

/// Run `group` in quick mode and check that it printed `rows` rows, each ran (no "could not
/// run"), carries its paper figure and tolerance and says PASS or GAP, and (when `label` is
/// given) that row `i` (0-based) is named starting with `label(i)`. Not that any row passes.
pub fn every_row_ran(group: &str, rows: usize, label: Option<fn(usize) -> String>) -> Vec<Check> {
    let checks = hotlaunch::reproduce::run_group(group, true, |_| {}).unwrap();
    assert_eq!(checks.len(), rows, "one check per row of {group}'s check list");
    for (i, c) in checks.iter().enumerate() {
        if let Some(label) = label {
            assert!(c.check.starts_with(&label(i)), "row {}: {}", i + 1, c.check);
        }
        assert!(
            !c.simulated.starts_with("could not run"),
            "{}: {}",
            c.check,
            c.simulated
        );
        assert!(!c.paper.is_empty() && !c.tolerance.is_empty(), "{c:?}");
        assert!(c.status == "PASS" || c.status == "GAP", "{c:?}");
    }
    checks
}
