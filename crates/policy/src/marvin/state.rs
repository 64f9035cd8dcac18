//! Marvin's state: the per-object metadata bits (in the runtime's 16 metadata bits), each app's
//! reclamation table and swap-file bookkeeping, and the run-wide state the kernel and framework
//! hooks share.

use engine::Nanos;
use kernel::types::{PageIdx, Pid};
use runtime::{Meta, ObjId};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

// ---- object metadata bit (runtime `Meta`, 16 bits; artifact `mirror/object.h`) ----
/// Stub flag (`x_flags_` bit 7): the object is reached through a stub and lives in the
/// page-aligned swapped-in space.
pub const STUB: Meta = 1 << 10;

// ---- write history (artifact `x_access_bits_` / `x_shift_regs_`) ----
// The artifact keeps a write bit and a 4-bit write shift register per object and shifts every
// register at each full-heap walk. Here each object keeps the write interval of its last app write
// instead (interval k = between the k-th and (k+1)-th full-heap walk of the app): the same answer,
// without visiting every object to shift it (test `on_demand_history_matches_the_shift_register`).

/// [`WriteLog`] value of an object never written by the app (nor allocated through it).
pub const NEVER: u32 = 0;

/// Per object id: 1 + the write interval of its last app write, or [`NEVER`].
#[derive(Debug, Default, Clone)]
pub struct WriteLog(Vec<u32>);

impl WriteLog {
    #[inline(always)]
    pub fn last(&self, o: ObjId) -> u32 {
        self.0.get(o as usize).copied().unwrap_or(NEVER)
    }
    /// An app write (or the allocation) of `o` during write interval `cur`.
    #[inline(always)]
    pub fn write(&mut self, o: ObjId, cur: u32) {
        let i = o as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, NEVER);
        }
        self.0[i] = cur + 1;
    }
    /// `o` was freed (its id may be reused by an object that starts with no history).
    #[inline(always)]
    pub fn forget(&mut self, o: ObjId) {
        if let Some(x) = self.0.get_mut(o as usize) {
            *x = NEVER;
        }
    }
}

/// Cold in write interval `cur` (§6.1; artifact `objectIsCold = wsr < 2 && !wrote` for 4
/// rounds): no app write in `cur` nor in the `rounds - 1` intervals before it. `last` is the
/// object's [`WriteLog`] value.
#[inline(always)]
pub fn is_cold(last: u32, cur: u32, rounds: u32) -> bool {
    last == NEVER || cur as u64 + 1 >= last as u64 + rounds as u64
}

// ---- per-object swap state in the app's table (dense by object id) ----
/// A checkpoint of the object is in the swap file.
pub const SAVED: u8 = 1 << 0;
/// Written since its last save: it must be saved again before it can be reclaimed.
pub const DIRTY: u8 = 1 << 1;
/// Reclaimed: only its stub is resident; an access is an object fault.
pub const RECLAIMED: u8 = 1 << 2;

/// A reclamation-table entry (artifact `marvin_reclamation_table.h`): the object, its pages in the
/// swapped-in space and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rte {
    pub obj: ObjId,
    pub first: PageIdx,
    pub pages: u32,
    pub size: u32,
}

/// Counters of one app (summed into the run's metrics when the app dies or the run ends).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub stubs_created: u64,
    pub stub_bytes: u64,
    pub saved_bytes: u64,
    pub reclaimed_bytes: u64,
    /// Of `reclaimed_bytes`, dropped right after a stub round (not asked by the kernel).
    pub stub_round_reclaimed_bytes: u64,
    pub restored_bytes: u64,
    pub object_faults: u64,
    pub fault_bytes: u64,
    pub dirty_bytes: u64,
    pub swap_file_writes: u64,
    pub compactions: u64,
    pub barrier_accesses: u64,
    pub stub_pause_ns: u64,
    pub eager_restore_ns: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.stubs_created += o.stubs_created;
        self.stub_bytes += o.stub_bytes;
        self.saved_bytes += o.saved_bytes;
        self.reclaimed_bytes += o.reclaimed_bytes;
        self.stub_round_reclaimed_bytes += o.stub_round_reclaimed_bytes;
        self.restored_bytes += o.restored_bytes;
        self.object_faults += o.object_faults;
        self.fault_bytes += o.fault_bytes;
        self.dirty_bytes += o.dirty_bytes;
        self.swap_file_writes += o.swap_file_writes;
        self.compactions += o.compactions;
        self.barrier_accesses += o.barrier_accesses;
        self.stub_pause_ns += o.stub_pause_ns;
        self.eager_restore_ns += o.eager_restore_ns;
    }
}

/// One app process's Marvin state: shared by its runtime hooks (barrier, GC) and, through
/// [`Global`], the kernel's shrinker and the framework hooks.
#[derive(Debug, Default)]
pub struct AppTable {
    pub pid: Option<Pid>,
    pub foreground: bool,
    /// When it last went to the background (victim order `lru`).
    pub bg_since: Nanos,
    /// Per object id: [`SAVED`] / [`DIRTY`] / [`RECLAIMED`].
    pub st: Vec<u8>,
    /// The reclamation table, rebuilt at each full-heap walk.
    pub table: Vec<Rte>,
    /// Swap-file size and its dead bytes (freed objects' records), bytes.
    pub file_bytes: u64,
    pub dead_bytes: u64,
    pub c: Counters,
}

impl AppTable {
    #[inline(always)]
    pub fn state(&self, o: ObjId) -> u8 {
        self.st.get(o as usize).copied().unwrap_or(0)
    }
    #[inline(always)]
    pub fn state_mut(&mut self, o: ObjId) -> &mut u8 {
        if self.st.len() <= o as usize {
            self.st.resize(o as usize + 1, 0);
        }
        &mut self.st[o as usize]
    }
    /// Bytes that could be dropped now (saved, clean, resident).
    pub fn reclaimable_bytes(&self) -> u64 {
        self.table
            .iter()
            .filter(|e| self.state(e.obj) & (SAVED | DIRTY | RECLAIMED) == SAVED)
            .map(|e| e.size as u64)
            .sum()
    }
}

pub type AppRef = Rc<RefCell<AppTable>>;

/// Which background app the kernel asks first (the paper leaves it open, §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VictimOrder {
    /// Least recently used first (longest in the background).
    Lru,
    /// Most reclaimable bytes first.
    Largest,
}

/// One shrinker call that reclaimed something (for the reclaim-latency metric).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReclaimEvent {
    pub t: Nanos,
    pub pages: u64,
}

/// Run-wide state: each app's table (by the scenario's app index) and the counters of dead apps.
#[derive(Debug)]
pub struct Global {
    pub apps: Vec<Option<AppRef>>,
    pub order: VictimOrder,
    pub eager_restore: bool,
    /// Policy CPU per reclamation-table entry the kernel scans, ns.
    pub rte_scan_ns: u64,
    pub retired: Counters,
    pub reclaims: Vec<ReclaimEvent>,
    pub reclaimed_pages: u64,
    /// Bytes each hot launch of each app restored eagerly, in launch order (by app index).
    pub restores: Vec<Vec<u64>>,
    /// Eager restore: the runtime's read rate (B/ns) and the flash's (latency ns, B/ns); the
    /// slower of the two sets the stall.
    pub restore_rate: f64,
    pub flash_read: (f64, f64),
}

impl Global {
    /// Stop-the-world time to read `bytes` of objects back from the swap file (one sequential
    /// pass over the file, §6.2 `SwapObjectsIn`).
    pub fn restore_ns(&self, bytes: u64) -> u64 {
        if bytes == 0 {
            return 0;
        }
        let (lat, bw) = self.flash_read;
        let device = lat + bytes as f64 / bw;
        let runtime = bytes as f64 / self.restore_rate;
        device.max(runtime) as u64
    }
}

impl Global {
    pub fn app(&self, app: usize) -> Option<&AppRef> {
        self.apps.get(app).and_then(|a| a.as_ref())
    }

    /// Install a fresh table for a new process of `app`.
    pub fn attach(&mut self, app: usize, t: AppRef) {
        if self.apps.len() <= app {
            self.apps.resize(app + 1, None);
        }
        if let Some(old) = self.apps[app].replace(t) {
            self.retired.add(&old.borrow().c);
        }
    }

    pub fn detach(&mut self, app: usize) {
        if let Some(old) = self.apps.get_mut(app).and_then(|a| a.take()) {
            self.retired.add(&old.borrow().c);
        }
    }

    /// Counters of every app, dead or alive.
    pub fn totals(&self) -> Counters {
        let mut c = self.retired;
        for a in self.apps.iter().flatten() {
            c.add(&a.borrow().c);
        }
        c
    }

    /// Background apps in victim order (never the foreground app, never a dead one).
    pub fn victims(&self) -> Vec<AppRef> {
        let mut v: Vec<(u64, usize, AppRef)> = self
            .apps
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.as_ref().map(|a| (i, a)))
            .filter(|(_, a)| {
                let t = a.borrow();
                !t.foreground && t.pid.is_some()
            })
            .map(|(i, a)| {
                let t = a.borrow();
                let key = match self.order {
                    VictimOrder::Lru => t.bg_since,
                    VictimOrder::Largest => u64::MAX - t.reclaimable_bytes(),
                };
                (key, i, a.clone())
            })
            .collect();
        v.sort_by_key(|(k, i, _)| (*k, *i));
        v.into_iter().map(|(_, _, a)| a).collect()
    }
}

/// The run's metrics (`FrameworkHooks::metrics`).
pub fn metrics(g: &Global, out: &mut BTreeMap<String, f64>) {
    let c = g.totals();
    let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
    let mut put = |k: &str, v: f64| {
        out.insert(format!("marvin.{k}"), v);
    };
    put("stubs_created", c.stubs_created as f64);
    put("stub_mb", mb(c.stub_bytes));
    put("saved_mb", mb(c.saved_bytes));
    put("reclaimed_mb", mb(c.reclaimed_bytes));
    put("stub_round_reclaimed_mb", mb(c.stub_round_reclaimed_bytes));
    put("restored_mb", mb(c.restored_bytes));
    put("object_faults", c.object_faults as f64);
    put("fault_mb", mb(c.fault_bytes));
    put("dirtied_mb", mb(c.dirty_bytes));
    put("swap_file_write_mb", mb(c.swap_file_writes));
    put("swap_file_compactions", c.compactions as f64);
    put("barrier_accesses", c.barrier_accesses as f64);
    put("stub_pause_ms", c.stub_pause_ns as f64 / 1e6);
    put("eager_restore_ms", c.eager_restore_ns as f64 / 1e6);
    put("shrinker_calls", g.reclaims.len() as f64);
    put("shrinker_reclaimed_mb", g.reclaimed_pages as f64 / 256.0);
    for (i, r) in g.restores.iter().enumerate() {
        if let Some(&b) = r.last() {
            put(&format!("app{i}.last_restore_mb"), mb(b));
        }
        for (k, &b) in r.iter().enumerate() {
            put(&format!("app{i}.restore{k}_mb"), mb(b));
        }
    }
    let file: u64 = g.apps.iter().flatten().map(|a| a.borrow().file_bytes).sum();
    put("swap_file_mb_live_apps", mb(file));
}
