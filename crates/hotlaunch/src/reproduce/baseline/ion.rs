//! Baseline rows about I/O buffers, kernel allocations and physical-memory fragmentation
//! (ISMM'15 §3 and §6 on the Nexus 10).

use super::super::CheckList;

pub(super) fn checks() -> CheckList {
    vec![]
}
