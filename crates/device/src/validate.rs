//! Range checks of a device profile ([`DeviceProfile::validate`]); every error names the key
//! and, when the profile came from text, the line it is written on.

use super::*;

impl DeviceProfile {
    /// Checks every value's range (already done by the constructors; use after editing a
    /// profile in code). Errors name `origin` `"<in memory>"`.
    pub fn validate(&self) -> Result<(), DeviceError> {
        self.validate_in("", "<in memory>")
    }

    pub(crate) fn validate_in(&self, text: &str, origin: &str) -> Result<(), DeviceError> {
        let v = Validator { text, origin };
        let m = &self.memory;
        let k = &self.kernel;
        let c = &self.cpu;
        let f = &self.flash;
        let s = &self.swap;

        if self.name.trim().is_empty() {
            return Err(v.err("", "name", "a non-empty name", format!("{:?}", self.name)));
        }

        v.uint_range(
            "memory",
            "dram_mb",
            m.dram_mb,
            1,
            1 << 20,
            "a positive size in MB (at most 1048576)",
        )?;
        v.pos_f64(
            "memory",
            "dram_bandwidth_mb_s",
            m.dram_bandwidth_mb_s,
            1e7,
            "a positive rate in MB/s",
        )?;
        let reserved = m.kernel_reserve_mb.saturating_add(m.system_reserve_mb);
        if reserved >= m.dram_mb {
            return Err(v.err(
                "memory",
                "kernel_reserve_mb",
                &format!(
                    "kernel_reserve_mb + system_reserve_mb less than memory.dram_mb ({})",
                    m.dram_mb
                ),
                format!("{} + {} = {reserved}", m.kernel_reserve_mb, m.system_reserve_mb),
            ));
        }

        if m.system_file_mb > m.system_reserve_mb {
            return Err(v.err(
                "memory",
                "system_file_mb",
                &format!("at most memory.system_reserve_mb ({})", m.system_reserve_mb),
                m.system_file_mb.to_string(),
            ));
        }
        self.validate_android(&v)?;

        let managed_kb = self.managed_pages() * (PAGE_SIZE / 1024);
        if let Some(mfk) = k.min_free_kbytes {
            let max = (managed_kb / 4).max(1);
            v.uint_range(
                "kernel",
                "min_free_kbytes",
                mfk,
                1,
                max,
                &format!("a size in KiB from 1 to a quarter of managed memory ({max})"),
            )?;
        }
        v.uint_range(
            "kernel",
            "watermark_scale_factor",
            k.watermark_scale_factor.into(),
            1,
            3000,
            "an integer from 1 to 3000",
        )?;
        v.uint_range(
            "kernel",
            "swappiness",
            k.swappiness.into(),
            0,
            200,
            "an integer from 0 to 200",
        )?;
        v.uint_range(
            "kernel",
            "page_cluster",
            k.page_cluster.into(),
            0,
            10,
            "an integer from 0 to 10",
        )?;
        if k.pageblock_order != 9 && k.pageblock_order != 10 {
            return Err(v.err(
                "kernel",
                "pageblock_order",
                "9 or 10",
                k.pageblock_order.to_string(),
            ));
        }
        v.uint_range(
            "kernel",
            "read_ahead_kb",
            k.read_ahead_kb.into(),
            0,
            16384,
            "a size in KiB from 0 to 16384",
        )?;
        v.uint_range(
            "kernel",
            "min_free_order_shift",
            k.min_free_order_shift.into(),
            0,
            10,
            "an integer from 0 to 10",
        )?;

        let speed = "a speed factor from 0.05 to 100 (1.0 = the host)";
        if !(c.speed_factor.is_finite() && (0.05..=100.0).contains(&c.speed_factor)) {
            return Err(v.err("cpu", "speed_factor", speed, c.speed_factor.to_string()));
        }
        v.uint_range(
            "cpu",
            "cores",
            c.cores.into(),
            1,
            256,
            "a core count from 1 to 256",
        )?;
        v.pos_f64(
            "cpu",
            "active_power_mw",
            c.active_power_mw,
            20_000.0,
            "a positive power in mW",
        )?;
        let t = "a positive time in ns (at most 100000000)";
        v.uint_range("cpu", "minor_fault_ns", c.minor_fault_ns, 1, 100_000_000, t)?;
        v.uint_range(
            "cpu",
            "major_fault_overhead_ns",
            c.major_fault_overhead_ns,
            1,
            100_000_000,
            t,
        )?;
        v.uint_range("cpu", "reclaim_scan_ns", c.reclaim_scan_ns, 1, 100_000_000, t)?;
        v.uint_range("cpu", "reclaim_unmap_ns", c.reclaim_unmap_ns, 1, 100_000_000, t)?;
        v.uint_range("cpu", "zap_page_ns", c.zap_page_ns, 1, 100_000_000, t)?;
        v.uint_range("cpu", "zap_range_ns", c.zap_range_ns, 1, 100_000_000, t)?;
        v.pos_f64(
            "cpu",
            "process_create_ms",
            c.process_create_ms,
            100_000.0,
            "a positive time in ms",
        )?;

        v.pos_f64(
            "flash",
            "read_latency_us",
            f.read_latency_us,
            1e6,
            "a positive latency in µs",
        )?;
        v.pos_f64(
            "flash",
            "write_latency_us",
            f.write_latency_us,
            1e6,
            "a positive latency in µs",
        )?;
        v.pos_f64(
            "flash",
            "read_bandwidth_mb_s",
            f.read_bandwidth_mb_s,
            1e6,
            "a positive rate in MB/s",
        )?;
        v.pos_f64(
            "flash",
            "write_bandwidth_mb_s",
            f.write_bandwidth_mb_s,
            1e6,
            "a positive rate in MB/s",
        )?;
        v.pos_f64(
            "flash",
            "read_energy_nj_per_kb",
            f.read_energy_nj_per_kb,
            1e7,
            "a positive energy in nJ/KiB",
        )?;
        v.pos_f64(
            "flash",
            "write_energy_nj_per_kb",
            f.write_energy_nj_per_kb,
            1e7,
            "a positive energy in nJ/KiB",
        )?;

        let zmax = m.dram_mb.saturating_mul(4);
        v.uint_range(
            "swap",
            "zram_disksize_mb",
            s.zram_disksize_mb,
            0,
            zmax,
            &format!("a size in MB from 0 (no zram) to 4 × memory.dram_mb ({zmax})"),
        )?;
        v.uint_range(
            "swap",
            "flash_swap_mb",
            s.flash_swap_mb,
            0,
            1 << 24,
            "a size in MB from 0 (no flash swap) to 16777216",
        )?;
        if let Some(d) = &self.display {
            for (key, px) in [("width_px", d.width_px), ("height_px", d.height_px)] {
                v.uint_range(
                    "display",
                    key,
                    px as u64,
                    1,
                    16384,
                    "a pixel count from 1 to 16384",
                )?;
            }
        }
        Ok(())
    }

    fn validate_android(&self, v: &Validator) -> Result<(), DeviceError> {
        match self.android.problem() {
            Some((key, expected, got)) => Err(v.err("android", key, &expected, got)),
            None => Ok(()),
        }
    }
}

/// Builds range errors with the line where the key is written.
struct Validator<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Validator<'_> {
    fn err(&self, section: &str, key: &str, expected: &str, got: String) -> DeviceError {
        let dotted = if section.is_empty() {
            key.to_string()
        } else {
            format!("{section}.{key}")
        };
        DeviceError::Invalid {
            origin: error::one_line(self.origin),
            line: error::find_key_line(self.text, section, key),
            key: dotted,
            expected: expected.to_string(),
            got: error::one_line(&got),
        }
    }

    fn uint_range(
        &self,
        section: &str,
        key: &str,
        value: u64,
        lo: u64,
        hi: u64,
        expected: &str,
    ) -> Result<(), DeviceError> {
        if value < lo || value > hi {
            return Err(self.err(section, key, expected, value.to_string()));
        }
        Ok(())
    }

    fn pos_f64(
        &self,
        section: &str,
        key: &str,
        value: f64,
        max: f64,
        expected: &str,
    ) -> Result<(), DeviceError> {
        if !(value.is_finite() && value > 0.0 && value <= max) {
            return Err(self.err(
                section,
                key,
                &format!("{expected} (at most {max})"),
                value.to_string(),
            ));
        }
        Ok(())
    }
}
