//! Discrete-event core of hotlaunch.
//!
//! What is modelled:
//! - simulated time in nanoseconds ([`Nanos`]), never wall-clock time;
//! - an [`EventQueue`] ordered by (time, insertion sequence) so that ties break deterministically;
//! - independent, seeded RNG streams per component ([`RngStreams`]), so that adding draws in one
//!   component does not perturb another;
//! - CPU time charged to an actor ([`Actor`]) under a category ([`Category`]) in a [`CpuLedger`];
//! - the *critical path* of a thread: a [`Stall`] is time a thread waits (fault, reclaim, I/O), which
//!   the caller adds to that thread's clock and to launch latency.
//!
//! Simplified: actors do not contend for cores; each actor's CPU time is accounted, and latency only
//! accrues on the thread that waits (other cores are assumed free, as on an 8-core phone).

pub mod fsio;
pub mod prefetch;
pub use prefetch::prefetch;
pub mod text;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated time or a duration, in nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_SEC: Nanos = 1_000_000_000;

/// Convert nanoseconds to milliseconds as f64 (for reports).
pub fn ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// A priority queue of timed events. Events at equal times pop in insertion order.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(Nanos, u64, usize)>>,
    slots: Vec<Option<E>>,
    free: Vec<usize>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
        }
    }

    /// Schedule `ev` at time `at`.
    pub fn push(&mut self, at: Nanos, ev: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(ev);
                s
            }
            None => {
                self.slots.push(Some(ev));
                self.slots.len() - 1
            }
        };
        self.heap.push(Reverse((at, self.seq, slot)));
        self.seq += 1;
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Reverse((t, _, slot)) = self.heap.pop()?;
        let ev = self.slots[slot].take().expect("event slot filled");
        self.free.push(slot);
        Some((t, ev))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The deterministic RNG used everywhere in the simulator.
pub type SimRng = ChaCha8Rng;

/// Seeded RNG streams, one per named component: `stream("workload")` always yields the same
/// sequence for the same master seed, independent of how other streams are used.
#[derive(Debug, Clone, Copy)]
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        Self { seed }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A fresh RNG for `component` (and an index, e.g. an app id).
    pub fn stream(&self, component: &str, index: u64) -> SimRng {
        let mut h = 0xcbf2_9ce4_8422_2325u64 ^ self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for b in component.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
        }
        h = splitmix64(h ^ splitmix64(index));
        SimRng::seed_from_u64(h)
    }
}

/// SplitMix64 finaliser, used to derive stream seeds.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Who does CPU work. App-specific actors carry the app's process id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Actor {
    /// The main (UI) thread of a process: launch latency is measured on it.
    AppMain(u32),
    /// The runtime's GC / heap-task thread of a process.
    AppGc(u32),
    Kswapd,
    Kcompactd,
    Lmkd,
    /// Kernel work not attributable to a specific thread (e.g. I/O completion).
    Kernel,
}

impl Actor {
    /// Name without the process id, used to aggregate per actor kind in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Actor::AppMain(_) => "app_main",
            Actor::AppGc(_) => "app_gc",
            Actor::Kswapd => "kswapd",
            Actor::Kcompactd => "kcompactd",
            Actor::Lmkd => "lmkd",
            Actor::Kernel => "kernel",
        }
    }
}

/// What kind of CPU work was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Category {
    /// The app's own work (init, resume, rendering) from its profile.
    App,
    /// Page reclaim: LRU scanning, unmapping, swap-out bookkeeping.
    Reclaim,
    /// Page-fault handling (minor and major), excluding (de)compression.
    Fault,
    /// Physical-memory compaction (page migration).
    Compaction,
    Compress,
    Decompress,
    Gc,
    /// Process creation, kills, lmkd work.
    Lifecycle,
    /// A policy's own bookkeeping (its hooks charge it through [`HookCx::charge`]).
    Policy,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::App,
        Category::Reclaim,
        Category::Fault,
        Category::Compaction,
        Category::Compress,
        Category::Decompress,
        Category::Gc,
        Category::Lifecycle,
        Category::Policy,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Category::App => "app",
            Category::Reclaim => "reclaim",
            Category::Fault => "fault",
            Category::Compaction => "compaction",
            Category::Compress => "compress",
            Category::Decompress => "decompress",
            Category::Gc => "gc",
            Category::Lifecycle => "lifecycle",
            Category::Policy => "policy",
        }
    }

    /// Position in [`Category::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// CPU time per actor kind and category (dense array: [actor kind][category]).
#[derive(Debug, Clone, Default)]
pub struct CpuLedger {
    by_kind: [[Nanos; 9]; 6],
}

impl CpuLedger {
    fn kind_index(actor: Actor) -> usize {
        match actor {
            Actor::AppMain(_) => 0,
            Actor::AppGc(_) => 1,
            Actor::Kswapd => 2,
            Actor::Kcompactd => 3,
            Actor::Lmkd => 4,
            Actor::Kernel => 5,
        }
    }
    const KIND_NAMES: [&'static str; 6] = ["app_main", "app_gc", "kswapd", "kcompactd", "lmkd", "kernel"];

    /// Charge `ns` of CPU to `actor` under `cat`.
    #[inline]
    pub fn charge(&mut self, actor: Actor, cat: Category, ns: Nanos) {
        self.by_kind[Self::kind_index(actor)][cat.index()] += ns;
    }

    pub fn total(&self) -> Nanos {
        self.by_kind.iter().flatten().sum()
    }

    pub fn by_category(&self, cat: Category) -> Nanos {
        self.by_kind.iter().map(|row| row[cat.index()]).sum()
    }

    /// CPU charged to `actor`'s kind (all processes of that kind) under `cat`.
    pub fn of_kind(&self, actor: Actor, cat: Category) -> Nanos {
        self.by_kind[Self::kind_index(actor)][cat.index()]
    }

    /// Add everything `other` recorded.
    pub fn absorb(&mut self, other: &CpuLedger) {
        for (a, b) in self.by_kind.iter_mut().zip(other.by_kind.iter()) {
            for (x, y) in a.iter_mut().zip(b.iter()) {
                *x += y;
            }
        }
    }

    /// Memory-management CPU (everything but the app's own work).
    pub fn memory_management(&self) -> Nanos {
        self.total() - self.by_category(Category::App) - self.by_category(Category::Lifecycle)
    }

    /// (actor kind, total ns) in a fixed order.
    pub fn by_actor_kind(&self) -> Vec<(&'static str, Nanos)> {
        Self::KIND_NAMES
            .iter()
            .zip(self.by_kind.iter())
            .map(|(n, row)| (*n, row.iter().sum()))
            .collect()
    }

    /// (category name, total ns) in a fixed order.
    pub fn categories(&self) -> Vec<(&'static str, Nanos)> {
        Category::ALL
            .iter()
            .map(|c| (c.name(), self.by_category(*c)))
            .collect()
    }
}

/// Timer requests made by policy hooks, drained by the framework into its event queue (each fires
/// the policy's `on_timer(token)` at `at`, or at once if `at` is in the past).
#[derive(Debug, Clone, Default)]
pub struct Timers {
    pending: Vec<(Nanos, u64)>,
}

impl Timers {
    /// Ask for `on_timer(token)` at simulated time `at`.
    pub fn schedule(&mut self, at: Nanos, token: u64) {
        self.pending.push((at, token));
    }

    /// The requests made since the last call, in request order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, (Nanos, u64)> {
        self.pending.drain(..)
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// What every policy hook of every layer receives: the simulated time, the actor on whose behalf
/// the hook runs, CPU charging and timers. Layers add their own narrow facade next to it (the
/// kernel's `PolicyKernel` for framework hooks); this part is the same everywhere.
pub struct HookCx<'a> {
    /// Simulated time of the decision.
    pub now: Nanos,
    /// The thread the stack is running when it calls the hook (its CPU pays for [`Self::charge`]).
    pub actor: Actor,
    cpu: &'a mut CpuLedger,
    timers: &'a mut Timers,
}

impl<'a> HookCx<'a> {
    pub fn new(now: Nanos, actor: Actor, cpu: &'a mut CpuLedger, timers: &'a mut Timers) -> Self {
        HookCx {
            now,
            actor,
            cpu,
            timers,
        }
    }

    /// Charge `ns` of the policy's own CPU to the acting thread (category `policy`).
    pub fn charge(&mut self, ns: Nanos) {
        self.cpu.charge(self.actor, Category::Policy, ns);
    }

    /// Charge `ns` to `actor` under `cat` (e.g. work a policy hands to a kernel thread).
    pub fn charge_to(&mut self, actor: Actor, cat: Category, ns: Nanos) {
        self.cpu.charge(actor, cat, ns);
    }

    /// Ask for the policy's `on_timer(token)` at `at`.
    pub fn schedule(&mut self, at: Nanos, token: u64) {
        self.timers.schedule(at, token);
    }

    /// A context for the same CPU ledger and timers with another time or actor (for nested calls).
    pub fn reborrow(&mut self, now: Nanos, actor: Actor) -> HookCx<'_> {
        HookCx::new(now, actor, self.cpu, self.timers)
    }
}

/// Why a thread waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StallKind {
    MinorFault,
    MajorFault,
    DirectReclaim,
    Compaction,
    FileRead,
    Gc,
}

/// Time a thread waited on the memory system, to be added to its critical path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stall {
    pub ns: Nanos,
    /// Of `ns`, the part that counts as a memory stall for PSI (reclaim, refault of a working-set
    /// page, compaction); fresh-page minor faults are not memory pressure.
    pub psi_ns: Nanos,
}

impl Stall {
    pub const ZERO: Stall = Stall { ns: 0, psi_ns: 0 };

    pub fn add(&mut self, other: Stall) {
        self.ns += other.ns;
        self.psi_ns += other.psi_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn hook_cx_charges_policy_cpu_and_queues_timers() {
        let (mut cpu, mut timers) = (CpuLedger::default(), Timers::default());
        let mut cx = HookCx::new(7, Actor::Kswapd, &mut cpu, &mut timers);
        cx.charge(100);
        cx.schedule(50, 3);
        cx.reborrow(9, Actor::Lmkd).schedule(10, 4);
        assert_eq!(cpu.by_category(Category::Policy), 100);
        assert_eq!(timers.drain().collect::<Vec<_>>(), vec![(50, 3), (10, 4)]);
        assert!(timers.is_empty());
    }

    #[test]
    fn queue_orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.push(5, "c");
        q.push(1, "a");
        q.push(5, "d");
        q.push(1, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn rng_streams_are_independent_and_reproducible() {
        let s = RngStreams::new(42);
        let a: u64 = s.stream("workload", 0).gen();
        let b: u64 = s.stream("workload", 0).gen();
        let c: u64 = s.stream("workload", 1).gen();
        let d: u64 = RngStreams::new(43).stream("workload", 0).gen();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn ledger_sums() {
        let mut l = CpuLedger::default();
        l.charge(Actor::Kswapd, Category::Reclaim, 10);
        l.charge(Actor::AppMain(3), Category::Fault, 5);
        l.charge(Actor::AppMain(4), Category::App, 7);
        assert_eq!(l.total(), 22);
        assert_eq!(l.memory_management(), 15);
        assert_eq!(l.by_category(Category::Reclaim), 10);
    }
}
