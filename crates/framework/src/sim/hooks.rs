//! The policy's framework hooks.

use super::*;

/// Lifecycle callbacks for policies (MemSaver pages out at transition end, Fleet hints the
/// kernel when an app goes to the background, ...). Stock Android does nothing.
pub trait FrameworkHooks {
    fn on_foreground(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_launch_end(&mut self, _k: &mut Kernel, _app: &AppView, _touched: &[PageIdx]) {}
    fn on_background(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_transition_end(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_killed(&mut self, _k: &mut Kernel, _app: usize) {}
}

/// Stock Android: no lifecycle hooks.
pub struct StockFramework;
impl FrameworkHooks for StockFramework {}
