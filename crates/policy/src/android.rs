//! Stock Android: Linux LRU reclaim into zram (lz4 on Pixels), lmkd, no lifecycle hooks.
//! `android-swap` adds a flash swap partition used when zram is full (lower swap priority), the
//! setup Fleet §3.1 and Marvin §2 evaluate ("Android with swap").

use crate::{Params, Policy, PolicyParts, Seams, SwapDevices, SwapOverrides};
use device::DeviceProfile;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::zram::{Zram, ZramConfig};

pub struct Android {
    pub flash_swap: bool,
}

/// The swap devices of a run: `default` unless the scenario overrides them. zram is skipped
/// when its size is zero; flash swap must exist if asked for.
pub fn stock_backends(
    device: &DeviceProfile,
    swap: SwapOverrides,
    default: SwapDevices,
) -> Result<Vec<Box<dyn SwapBackend>>, String> {
    let devices = swap.devices.unwrap_or(default);
    let (want_zram, flash_swap) = match devices {
        SwapDevices::None => (false, false),
        SwapDevices::Zram => (true, false),
        SwapDevices::Flash => (false, true),
        SwapDevices::ZramFlash => (true, true),
    };
    let mut v: Vec<Box<dyn SwapBackend>> = Vec::new();
    let zram_mb = swap.zram_mb.unwrap_or(device.swap.zram_disksize_mb);
    if want_zram && zram_mb > 0 {
        let mut cfg = ZramConfig::from_profile(device);
        cfg.disksize_bytes = zram_mb << 20;
        // Each distinct compressed blob is decompressed and checksummed once, later loads of the
        // same blob reuse that proof (content::memo::Verify); tests of zram itself use `Always`.
        cfg.verify = content::memo::Verify::Memoised;
        v.push(Box::new(Zram::new(cfg, content::CostTable::builtin())));
    }
    if flash_swap {
        let mb = swap.flash_mb.unwrap_or(device.swap.flash_swap_mb);
        if mb == 0 {
            return Err(format!(
                "flash swap asked for but device `{}` has swap.flash_swap_mb = 0",
                device.name
            ));
        }
        v.push(Box::new(FlashSwap::new((mb * 256) as u32)));
    }
    Ok(v)
}

impl Policy for Android {
    fn name(&self) -> &'static str {
        if self.flash_swap {
            "android-swap"
        } else {
            "android"
        }
    }

    fn description(&self) -> &'static str {
        if self.flash_swap {
            "stock Android with a flash swap partition behind zram (Fleet §3.1, Marvin §2)"
        } else {
            "stock Android: LRU reclaim into zram, lmkd"
        }
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        _params: &Params,
    ) -> Result<PolicyParts, String> {
        let default = if self.flash_swap {
            SwapDevices::ZramFlash
        } else {
            SwapDevices::Zram
        };
        // Stock hooks everywhere; the swap devices are this policy's own even when the scenario
        // asks for none (an empty set of devices is still its choice in a composition).
        let mut parts = PolicyParts::stock(stock_backends(device, swap, default)?);
        parts.claims = Seams::SWAP_BACKENDS;
        Ok(parts)
    }
}
