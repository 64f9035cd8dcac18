//! One policy, one state: the handle a policy's hooks in different layers share.
//!
//! A technique's kernel, runtime and framework hooks are separate objects (the kernel owns its
//! hooks, each app's runtime owns its own, the framework owns the lifecycle hooks), but they act on
//! one state — Fleet's framework hook schedules the grouping GC its runtime hooks carry out, Marvin's
//! shrinker releases what its runtime hooks saved. Each part holds a clone of one [`Shared`] and
//! reaches the state with [`Shared::with`].
//!
//! Why this cannot panic on re-entry: the platform never lets a hook call another hook
//! synchronously. Kernel hooks receive views and return decisions; runtime hooks return decisions
//! and push kernel hints into a buffer the runtime applies after they return; framework hooks get a
//! kernel facade whose hook-reaching operations (madvise, mlock, compaction) are queued and applied
//! after the hook returns. So at most one `with` borrow of a policy's state is live at any time.
//! Nothing crosses threads (a run is single-threaded), hence `Rc`, not `Arc`.

use std::cell::RefCell;
use std::rc::Rc;

/// A policy's state, shared by its hook objects in every layer.
#[derive(Debug, Default)]
pub struct Shared<S>(Rc<RefCell<S>>);

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<S> Shared<S> {
    pub fn new(state: S) -> Self {
        Shared(Rc::new(RefCell::new(state)))
    }

    /// Run `f` on the state. Hooks call this once per hook invocation and return before the stack
    /// acts on their decision (see the module doc).
    pub fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }

    /// How many hook objects hold this state.
    pub fn holders(&self) -> usize {
        Rc::strong_count(&self.0)
    }
}

/// Where a policy's runs write metrics a caller reads after the run (tests, `reproduce`): the
/// same `with` as [`Shared`], but `Send + Sync` (an `Arc<Mutex>`), so a policy value holding one
/// can sit in the registry and run plans that worker threads share. Uncontended: a run is
/// single-threaded and the caller reads only after it.
#[derive(Debug, Default)]
pub struct Probe<S>(std::sync::Arc<std::sync::Mutex<S>>);

impl<S> Clone for Probe<S> {
    fn clone(&self) -> Self {
        Probe(std::sync::Arc::clone(&self.0))
    }
}

impl<S> Probe<S> {
    pub fn new(state: S) -> Self {
        Probe(std::sync::Arc::new(std::sync::Mutex::new(state)))
    }

    /// Run `f` on the metrics (a poisoned lock still gives its data: metrics are plain counters).
    pub fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_state() {
        let a = Shared::new(0u32);
        let b = a.clone();
        a.with(|s| *s += 2);
        b.with(|s| *s += 3);
        assert_eq!(a.with(|s| *s), 5);
        assert_eq!(a.holders(), 2);
    }

    #[test]
    fn probe_clones_share_one_record() {
        let a = Probe::new(Vec::<u32>::new());
        let b = a.clone();
        b.with(|v| v.push(4));
        assert_eq!(a.with(|v| v.clone()), vec![4]);
    }
}
