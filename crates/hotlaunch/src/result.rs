//! A simulation's output turned into the report's per-policy result ([`policy_result`]).

use super::*;

fn mb(pages: u64) -> f64 {
    round3(pages as f64 / 256.0)
}

fn mib(bytes: u64) -> f64 {
    round3(bytes as f64 / (1u64 << 20) as f64)
}

/// Turn a simulation's output into the report's per-policy result.
pub fn policy_result(policy: &str, out: &SimOutput) -> PolicyResult {
    let k = &out.kernel;
    let us = 1000; // histograms count microseconds
    let mut zram = ZramStat::default();
    for b in k.backends() {
        for (name, v) in b.stats() {
            match name {
                "orig_data_size" => zram.orig_data_size += v,
                "compr_data_size" => zram.compr_data_size += v,
                "mem_used_total" => zram.mem_used_total += v,
                "mem_limit" => zram.mem_limit += v,
                "mem_used_max" => zram.mem_used_max += v,
                "same_pages" => zram.same_pages += v,
                "pages_compacted" => zram.pages_compacted += v,
                "huge_pages" => zram.huge_pages += v,
                "huge_pages_since" => zram.huge_pages_since += v,
                _ => {}
            }
        }
    }
    let vmstat: BTreeMap<String, u64> = match serde_json::to_value(&k.vmstat) {
        Ok(serde_json::Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.as_u64()?)))
            .collect(),
        _ => BTreeMap::new(),
    };
    let free_counts = k.buddy().free_block_counts();
    let s = &out.samples;
    PolicyResult {
        policy: policy.to_string(),
        params: BTreeMap::new(),
        hot_launch_ms: LatencySummary::from_histogram(&out.hot_us, us),
        cold_launch_ms: LatencySummary::from_histogram(&out.cold_us, us),
        launches: Launches {
            hot: out.hot_us.len(),
            cold: out.cold_us.len(),
            interrupted: out.per_app.iter().map(|a| a.launches_interrupted).sum(),
            hot_killed: out.per_app.iter().map(|a| a.hot_killed).sum(),
            requested: out.per_app.iter().map(|a| a.launches_requested).sum(),
        },
        cached_apps: CachedApps {
            max: out.cached_max(),
            mean: round3(out.cached_mean()),
        },
        kills: Kills::from_reasons(out.kills.iter().map(|(k, v)| (k.to_string(), *v)).collect()),
        cpu_ms: CpuMs {
            by_category: k
                .cpu
                .categories()
                .into_iter()
                .map(|(n, v)| (n.to_string(), round3(ms(v))))
                .collect(),
            by_actor: k
                .cpu
                .by_actor_kind()
                .into_iter()
                .map(|(n, v)| (n.to_string(), round3(ms(v))))
                .collect(),
        },
        energy_j: round3(out.energy_j),
        flash: Flash {
            bytes_read: k.flash.bytes_read,
            bytes_written: k.flash.bytes_written,
        },
        zram,
        integrity: Integrity {
            pages_swapped_in: k.integrity.pages_swapped_in,
            checksum_mismatches: k.integrity.checksum_mismatches,
        },
        gc: {
            let g = &out.gc;
            Gc {
                collections: g.collections,
                full: g.full,
                sticky: g.sticky,
                background: g.background_collections,
                objects_visited: g.visits,
                mb_copied: mib(g.bytes_copied),
                mb_freed: mib(g.bytes_freed),
                cpu_ms: round3(ms(g.cpu_ns)),
                fault_stall_ms: round3(ms(g.fault_stall_ns)),
                launch_collections: g.launch_collections,
                launch_pause_ms: round3(ms(g.launch_pause_ns)),
            }
        },
        per_app: out
            .per_app
            .iter()
            .enumerate()
            .map(|(i, a)| AppResult {
                app: a.app.clone(),
                launches_hot: a.launches_hot,
                launches_cold: a.launches_cold,
                launches_interrupted: a.launches_interrupted,
                kills: a.kills,
                hot_launch_ms: LatencySummary::from_histogram(&a.hot_us, us),
                cold_launch_ms: LatencySummary::from_histogram(&a.cold_us, us),
                hot_launch_split_ms: out
                    .hot_split(i)
                    .map(|s| s.iter().map(|(n, v)| (n.to_string(), round3(v / 1e6))).collect())
                    .unwrap_or_default(),
            })
            .collect(),
        hot_launch_cdf: cdf_from_histogram(&out.hot_us, us, 200),
        unusable_index: (0..=kernel::types::MAX_ORDER)
            .map(|o| round3(kernel::buddy::unusable_index(&free_counts, o)))
            .collect(),
        psi: Psi {
            some_ms: round3(ms(k.psi.some_total_ns)),
            full_ms: round3(ms(k.psi.full_total_ns)),
        },
        vmstat,
        timeseries: TimeSeries {
            t_s: s.iter().map(|x| round3(x.t as f64 / NS_PER_SEC as f64)).collect(),
            cached_apps: s.iter().map(|x| x.cached_apps).collect(),
            free_mb: s.iter().map(|x| mb(x.free_pages)).collect(),
            anon_mb: s.iter().map(|x| mb(x.anon_pages)).collect(),
            file_mb: s.iter().map(|x| mb(x.file_pages)).collect(),
            swapped_mb: s.iter().map(|x| mb(x.swapped_pages)).collect(),
            zram_mb: s.iter().map(|x| mb(x.backend_pages)).collect(),
            kernel_mb: s.iter().map(|x| mb(x.kernel_pages)).collect(),
            psi_some_ms: s.iter().map(|x| round3(ms(x.psi_some_ns))).collect(),
            unusable_index: s
                .iter()
                .map(|x| x.unusable_index.iter().map(|&u| round3(u)).collect())
                .collect(),
            zram_orig_mb: s.iter().map(|x| mib(x.zram.orig_data_size)).collect(),
            zram_compr_mb: s.iter().map(|x| mib(x.zram.compr_data_size)).collect(),
            zram_same_pages: s.iter().map(|x| x.zram.same_pages).collect(),
            zram_huge_pages: s.iter().map(|x| x.zram.huge_pages).collect(),
            policy_cpu_ms: s.iter().map(|x| round3(ms(x.policy_cpu_ns))).collect(),
        },
        io_buffers: {
            let io = &k.io_buffers;
            let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("histogram bounds");
            for &ns in &io.latencies_ns {
                h.saturating_record((ns / 1000).max(1));
            }
            let by_order = |v: &[u64]| -> std::collections::BTreeMap<String, u64> {
                v.iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(o, &n)| (o.to_string(), n))
                    .collect()
            };
            let units: u64 = io.blocks_by_order.iter().sum();
            IoBuffers {
                allocations: io.allocations,
                mb: round3(io.bytes as f64 / (1u64 << 20) as f64),
                latency_ms: LatencySummary::from_histogram(&h, us),
                blocks_by_order: by_order(&io.blocks_by_order),
                order0_share: if units == 0 {
                    0.0
                } else {
                    round3(io.blocks_by_order[0] as f64 / units as f64)
                },
                failed_by_order: by_order(&io.failed_by_order),
                compactions: io.compact_stalls,
                compaction_ms: round3(ms(io.compact_ns)),
            }
        },
        gcs: out
            .gcs
            .iter()
            .map(|g| GcRow {
                t_s: round3(g.t as f64 / NS_PER_SEC as f64),
                app: out
                    .per_app
                    .get(g.app as usize)
                    .map_or_else(String::new, |a| a.app.clone()),
                state: g.state.name().to_string(),
                cause: g.cause.name().to_string(),
                kind: if g.sticky { "sticky" } else { "full" }.to_string(),
                compacting: g.compacting,
                objects_visited: g.visits,
                mb_copied: mib(g.bytes_copied),
                pages_touched: g.pages_touched,
                cpu_ms: round3(ms(g.cpu_ns)),
                fault_stall_ms: round3(ms(g.stall_ns)),
                pause_ms: round3(ms(g.pause_ns)),
            })
            .collect(),
        alloc_ms: out.alloc_ms.iter().map(|&x| round3(x)).collect(),
        policy_metrics: out.policy_metrics.clone(),
    }
}
