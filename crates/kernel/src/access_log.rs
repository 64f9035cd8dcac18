//! Recording of the page-access stream (`hotlaunch run --page-trace`).
//!
//! Off by default: [`crate::Kernel::access`] then pays one predictable branch per access. When a
//! log is installed ([`crate::Kernel::record_accesses`]) every access the kernel sees (resident
//! hits and faults alike) appends one entry: the simulated time in whole seconds and a stable
//! object id
//!
//! ```text
//! obj_id = app << 40 | mapping << 28 | offset
//! ```
//!
//! where `app` numbers the distinct process names in first-seen order (a relaunched app keeps
//! its number: ids survive kills), `mapping` is the position of the page's mapping among the
//! process's live mappings (the n-th `mmap` still mapped), and `offset` the page's offset in it.
//! Simplified: a process unmapping an earlier mapping shifts the numbers of later ones.
//!
//! Memory: 12 bytes per access (a `u32` time and a `u64` id in two dense vectors), so a run of
//! 100 M accesses holds 1.2 GB; the exporter (crate `hotlaunch-trace`) adds 8 bytes per access
//! for the next-access pass.

use crate::types::{PageIdx, Pid};
use engine::{Nanos, NS_PER_SEC};

/// Bits of an object id below the app number.
pub const APP_SHIFT: u32 = 40;
/// Bits of an object id below the mapping number.
pub const MAPPING_SHIFT: u32 = 28;

/// The recorded stream (see the module doc).
#[derive(Debug, Default, Clone)]
pub struct AccessLog {
    /// Simulated time of each access, whole seconds.
    pub time_s: Vec<u32>,
    /// Object id of each access.
    pub obj_id: Vec<u64>,
    /// Distinct process names; an app number indexes this.
    pub apps: Vec<String>,
    /// pid -> app number (`u32::MAX`: not seen yet).
    app_of_pid: Vec<u32>,
}

impl AccessLog {
    pub fn len(&self) -> usize {
        self.obj_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.obj_id.is_empty()
    }

    fn app_number(&mut self, pid: Pid, name: &str) -> u32 {
        let p = pid as usize;
        if self.app_of_pid.len() <= p {
            self.app_of_pid.resize(p + 1, u32::MAX);
        }
        if self.app_of_pid[p] == u32::MAX {
            let n = match self.apps.iter().position(|a| a == name) {
                Some(i) => i as u32,
                None => {
                    self.apps.push(name.to_string());
                    self.apps.len() as u32 - 1
                }
            };
            self.app_of_pid[p] = n;
        }
        self.app_of_pid[p]
    }
}

impl crate::Kernel {
    /// Start recording every page access into a fresh [`AccessLog`].
    pub fn record_accesses(&mut self) {
        self.access_log = Some(Box::default());
    }

    /// Stop recording and hand back what was recorded.
    pub fn take_access_log(&mut self) -> Option<AccessLog> {
        self.access_log.take().map(|b| *b)
    }

    /// Append one access (called from [`crate::Kernel::access`] only while recording).
    #[cold]
    #[inline(never)]
    pub(crate) fn log_access(&mut self, now: Nanos, idx: PageIdx) {
        let Some(page) = self.pt.pages.get(idx as usize) else {
            return;
        };
        let pid = page.pid;
        let Some(proc) = self.procs.get(pid as usize) else {
            return;
        };
        let mut id = None;
        for (n, &v) in proc.vmas.iter().enumerate() {
            if let Some(vma) = &self.vmas[v] {
                if idx >= vma.first && idx < vma.first + vma.pages {
                    id = Some(((n as u64) << MAPPING_SHIFT) | (idx - vma.first) as u64);
                    break;
                }
            }
        }
        let Some(local) = id else {
            return;
        };
        let name = &proc.name;
        let Some(log) = self.access_log.as_deref_mut() else {
            return;
        };
        let app = log.app_number(pid, name) as u64;
        log.time_s.push((now / NS_PER_SEC).min(u32::MAX as u64) as u32);
        log.obj_id.push((app << APP_SHIFT) | local);
    }
}
