//! Validation of an app profile: every key's range, with one-line errors naming the file, line
//! and `section.key` (and `era.<release>.` for a value that is only wrong once an era table is
//! applied).

use super::*;

impl AppProfile {
    pub(crate) fn validate_in(&self, text: &str, origin: &str) -> Result<(), AppError> {
        let v = Validator {
            text,
            origin,
            prefix: "",
        };
        self.validate_with(&v)?;
        self.validate_eras(text, origin)
    }

    fn validate_with(&self, v: &Validator) -> Result<(), AppError> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.chars().count() <= 64
                && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if !name_ok(&self.name) {
            return Err(v.err(
                "",
                "name",
                "a non-empty name of at most 64 characters without spaces",
                &self.name,
            ));
        }
        for (key, s) in [("package", &self.package), ("category", &self.category)] {
            if s.trim().is_empty() || s.chars().any(|c| c.is_control()) {
                return Err(v.err("", key, "a non-empty single-line string", s));
            }
        }
        if self.contexts.is_empty() || self.contexts.len() > 16 {
            return Err(v.err(
                "",
                "contexts",
                "1 to 16 context names",
                &format!("{} names", self.contexts.len()),
            ));
        }
        for (i, c) in self.contexts.iter().enumerate() {
            if !name_ok(c) {
                return Err(v.err("", "contexts", "non-empty context names without spaces", c));
            }
            if self.contexts[..i].iter().any(|o| o.eq_ignore_ascii_case(c)) {
                return Err(v.err("", "contexts", "distinct context names", &format!("{c:?} twice")));
            }
        }
        if !(1..=10_000).contains(&self.threads) {
            return Err(v.err(
                "",
                "threads",
                "an integer in 1..=10000",
                &self.threads.to_string(),
            ));
        }
        v.range("", "io_buffer_scale", self.io_buffer_scale, 0.0, false, 100.0)?;
        if let Some((key, expected, got)) = self.writes.invalid() {
            return Err(v.err("writes", key, &expected, &got));
        }
        if let Some((key, expected, got)) = self.ui.invalid() {
            return Err(v.err("ui", key, &expected, &got));
        }
        let f = &self.footprint;
        v.range("footprint", "anon_mb_start", f.anon_mb_start, 0.0, false, 65536.0)?;
        v.range(
            "footprint",
            "anon_mb_steady",
            f.anon_mb_steady,
            0.0,
            false,
            65536.0,
        )?;
        if f.anon_mb_steady < f.anon_mb_start {
            return Err(v.err(
                "footprint",
                "anon_mb_steady",
                &format!("≥ footprint.anon_mb_start ({})", f.anon_mb_start),
                &f.anon_mb_steady.to_string(),
            ));
        }
        v.range("footprint", "growth_seconds", f.growth_seconds, 0.0, false, 1e6)?;
        let j = &self.java;
        if j.heap.trim().is_empty() || j.heap.chars().any(|c| c.is_control()) {
            return Err(v.err(
                "java",
                "heap",
                &format!("one of {} or the path of a .hprof file", BUILTIN_HEAPS.join(", ")),
                &j.heap,
            ));
        }
        v.range(
            "java",
            "fg_alloc_mb_per_s",
            j.fg_alloc_mb_per_s,
            0.0,
            true,
            1000.0,
        )?;
        v.range(
            "java",
            "bg_alloc_mb_per_s",
            j.bg_alloc_mb_per_s,
            0.0,
            true,
            1000.0,
        )?;
        v.range("java", "launch_alloc_mb", j.launch_alloc_mb, 0.0, true, 4096.0)?;
        v.range("java", "churn_mb", j.churn_mb, 0.0, true, 4096.0)?;
        v.range("java", "churn_period_s", j.churn_period_s, 0.0, false, 86400.0)?;
        for (key, m) in [
            (
                "foreground_heap_growth_multiplier",
                j.foreground_heap_growth_multiplier,
            ),
            (
                "background_heap_growth_multiplier",
                j.background_heap_growth_multiplier,
            ),
        ] {
            if let Some(m) = m {
                v.range("java", key, m, 1.0, true, 100.0)?;
            }
        }
        if let Some((key, expected, got)) = j.linked.as_ref().and_then(|l| l.problem()) {
            return Err(v.err("java.linked", key, &expected, &got));
        }
        if let Some((key, expected, got)) = j.launch_bias.as_ref().and_then(|l| l.problem()) {
            return Err(v.err("java.launch_bias", key, &expected, &got));
        }
        v.range("footprint", "java_heap_share", f.java_heap_share, 0.0, true, 1.0)?;
        v.range("footprint", "file_mb", f.file_mb, 0.0, true, 65536.0)?;
        let l = &self.launch;
        v.range("launch", "cold_launch_ms", l.cold_launch_ms, 0.0, false, 1e6)?;
        v.range(
            "launch",
            "hot_launch_ms",
            l.hot_launch_ms,
            0.0,
            false,
            l.cold_launch_ms.max(f64::MIN_POSITIVE),
        )?;
        let a = &self.access;
        v.range(
            "access",
            "launch_set_fraction",
            a.launch_set_fraction,
            0.0,
            false,
            1.0,
        )?;
        v.range(
            "access",
            "foreground_ws_fraction",
            a.foreground_ws_fraction,
            0.0,
            false,
            1.0,
        )?;
        if a.foreground_ws_fraction < a.launch_set_fraction {
            return Err(v.err(
                "access",
                "foreground_ws_fraction",
                &format!("≥ access.launch_set_fraction ({})", a.launch_set_fraction),
                &a.foreground_ws_fraction.to_string(),
            ));
        }
        v.range("access", "b1_fraction", a.b1_fraction, 0.0, false, 1.0)?;
        v.range("access", "b2_fraction", a.b2_fraction, 0.0, true, 1.0)?;
        v.range("access", "b1_covers_b2", a.b1_covers_b2, 0.0, true, 1.0)?;
        if a.b2_fraction * a.b1_covers_b2 > a.b1_fraction + 1e-12 {
            return Err(v.err(
                "access",
                "b2_fraction",
                &format!(
                    "b2_fraction × b1_covers_b2 ≤ b1_fraction ({}), i.e. ≤ {:.4}",
                    a.b1_fraction,
                    a.b1_fraction / a.b1_covers_b2.max(1e-12)
                ),
                &a.b2_fraction.to_string(),
            ));
        }
        v.range(
            "access",
            "same_context_overlap",
            a.same_context_overlap,
            0.0,
            true,
            0.999,
        )?;
        v.range(
            "access",
            "cross_context_overlap",
            a.cross_context_overlap,
            0.0,
            true,
            a.same_context_overlap,
        )?;
        v.range("access", "adjacency", a.adjacency, 0.0, true, 0.99)?;
        v.range("access", "file_launch_share", a.file_launch_share, 0.0, true, 1.0)?;
        let c = &self.compressibility;
        let mix = [
            ("zero", c.zero),
            ("same_filled", c.same_filled),
            ("object", c.object),
            ("text", c.text),
            ("incompressible", c.incompressible),
        ];
        for (k, x) in mix {
            v.range("compressibility", k, x, 0.0, true, 1.0)?;
        }
        let sum: f64 = mix.iter().map(|(_, x)| x).sum();
        if (sum - 1.0).abs() > 0.01 {
            return Err(v.err(
                "compressibility",
                "zero",
                "fractions summing to 1 (±0.01)",
                &format!("sum {sum:.4}"),
            ));
        }
        // The access model must be constructible for the steady layout.
        let layout = AppLayout::from_profile(self);
        access::plan(self, &layout).map_err(|e| v.err("access", e.key, &e.expected, &e.got))?;
        Ok(())
    }

    /// Every `[era."<release>"]` table names a known release and gives a valid profile once
    /// applied (errors name `era.<release>.<section>.<key>`).
    fn validate_eras(&self, text: &str, origin: &str) -> Result<(), AppError> {
        let v = Validator {
            text,
            origin,
            prefix: "",
        };
        // Every era table names a known release and gives a valid profile once applied.
        for (release, ov) in &self.era {
            if !ANDROID_RELEASES.contains(&release.as_str()) {
                return Err(v.err(
                    "era",
                    release,
                    &format!("an Android release, one of {}", ANDROID_RELEASES.join(", ")),
                    release,
                ));
            }
            let mut applied = self.clone();
            applied.era.clear();
            ov.apply(&mut applied);
            let prefix = format!("era.{release}");
            applied.validate_with(&Validator {
                text,
                origin,
                prefix: &prefix,
            })?;
        }
        Ok(())
    }
}

pub(crate) struct Validator<'a> {
    pub(crate) text: &'a str,
    pub(crate) origin: &'a str,
    /// Prepended to every section (`era.10` while checking an era table applied).
    pub(crate) prefix: &'a str,
}

impl Validator<'_> {
    pub(crate) fn err(&self, section: &str, key: &str, expected: &str, got: &str) -> AppError {
        let owned;
        let section = if self.prefix.is_empty() {
            section
        } else {
            owned = if section.is_empty() {
                self.prefix.to_string()
            } else {
                tomlerr::join(self.prefix, section)
            };
            owned.as_str()
        };
        AppError::Invalid {
            origin: tomlerr::one_line(self.origin),
            line: tomlerr::find_key_line(self.text, section, key),
            key: tomlerr::join(section, key),
            expected: tomlerr::one_line(expected),
            got: tomlerr::one_line(got),
        }
    }

    /// `x` finite and in (lo, hi] (`lo_incl` = false) or [lo, hi].
    fn range(
        &self,
        section: &str,
        key: &str,
        x: f64,
        lo: f64,
        lo_incl: bool,
        hi: f64,
    ) -> Result<(), AppError> {
        let ok = engine::text::in_range(x, lo, lo_incl, hi);
        if ok {
            Ok(())
        } else {
            let lb = if lo_incl { '[' } else { '(' };
            Err(self.err(
                section,
                key,
                &format!("a number in {lb}{lo}, {hi}]"),
                &x.to_string(),
            ))
        }
    }
}
