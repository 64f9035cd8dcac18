//! TEMPORARY shim of the policy facade (replaced by the kernel work on the `kernel` branch).

use crate::hooks::PageView;
use crate::types::*;
use crate::Kernel;
use engine::{Actor, HookCx, Nanos, Stall};

#[derive(Debug, Clone, Copy)]
pub enum KernelCmd {
    Madvise { first: PageIdx, n: u32, advice: Advice },
}

pub struct PolicyKernel<'a> {
    k: &'a mut Kernel,
    now: Nanos,
    actor: Actor,
}

impl Kernel {
    pub fn policy_kernel(&mut self, now: Nanos, actor: Actor) -> PolicyKernel<'_> {
        PolicyKernel { k: self, now, actor }
    }

    pub fn apply_policy_cmds(&mut self) -> Stall {
        let mut stall = Stall::ZERO;
        for (now, actor, cmd) in std::mem::take(&mut self.policy_cmds) {
            match cmd {
                KernelCmd::Madvise { first, n, advice } => {
                    stall.add(self.madvise(now, actor, first, n, advice))
                }
            }
        }
        stall
    }
}

impl PolicyKernel<'_> {
    pub fn now(&self) -> Nanos {
        self.now
    }
    pub fn actor(&self) -> Actor {
        self.actor
    }
    pub fn cx(&mut self) -> HookCx<'_> {
        HookCx::new(self.now, self.actor, &mut self.k.cpu, &mut self.k.timers)
    }
    pub fn page(&self, idx: PageIdx) -> Option<PageView> {
        self.k.page(idx).map(|_| self.k.page_view(idx))
    }
    pub fn madvise(&mut self, first: PageIdx, n: u32, advice: Advice) {
        self.k
            .policy_cmds
            .push((self.now, self.actor, KernelCmd::Madvise { first, n, advice }));
    }
}
