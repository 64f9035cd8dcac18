//! The terminal table of `hotlaunch compare`: one row per figure, one column per policy, each cell
//! `mean ±half-width` of the 95% interval; then the paired differences from the baseline, each a
//! percentage (or an absolute difference when the baseline's mean is 0) or `n.s.` when its
//! interval crosses 0. Wide comparisons are split into blocks of [`COLUMNS_PER_BLOCK`] policies.

use crate::compare::{CompareReport, Difference, FigureStats};

/// Policies per block of columns (keeps lines under ~150 characters).
pub const COLUMNS_PER_BLOCK: usize = 5;

/// Decimals for a value of this magnitude (≥1000: 0, ≥10: 1, ≥1: 2, else 3).
pub fn decimals(v: f64) -> usize {
    let a = v.abs();
    if a >= 1000.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    }
}

/// `mean ±half` with the mean's precision; `—` when not measured; the mean alone without an
/// interval.
pub fn mean_ci(s: &FigureStats) -> String {
    match (s.mean, s.ci95) {
        (None, _) => "—".to_string(),
        (Some(m), None) => format!("{m:.*}", decimals(m)),
        (Some(m), Some([lo, hi])) => {
            let d = decimals(m);
            format!("{m:.d$} ±{:.d$}", (hi - lo) / 2.0)
        }
    }
}

/// The same value on every seed (a zero-width interval at 0).
pub fn is_same(d: &Difference) -> bool {
    d.mean == 0.0 && d.ci95.is_none_or(|[a, b]| a == 0.0 && b == 0.0)
}

/// A number with the precision its magnitude asks for ([`decimals`]), with a sign.
pub fn signed(v: f64) -> String {
    format!("{v:+.*}", decimals(v))
}

/// A number with the precision its magnitude asks for.
pub fn num(v: f64) -> String {
    format!("{v:.*}", decimals(v))
}

/// The difference cell: `+12.3%` / `-4.0` when significant, `n.s.` otherwise, empty for the
/// baseline itself or when there is nothing to pair.
pub fn difference(s: &FigureStats) -> String {
    match &s.vs_baseline {
        None => String::new(),
        Some(d) if is_same(d) => "same".to_string(),
        Some(d) if !d.significant => "n.s.".to_string(),
        Some(d) => match d.percent {
            Some(p) => format!("{p:+.1}%"),
            None => signed(d.mean),
        },
    }
}

fn figure_label(r: &CompareReport, key: &str) -> String {
    r.figure(key)
        .map(|f| format!("{} ({})", f.label, f.unit))
        .unwrap_or_else(|| key.to_string())
}

fn block(out: &mut String, r: &CompareReport, cols: &[usize], cell: &dyn Fn(&FigureStats) -> String) {
    let labels: Vec<String> = r.figures.iter().map(|f| figure_label(r, &f.key)).collect();
    let w0 = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let cells: Vec<Vec<String>> = r
        .figures
        .iter()
        .map(|f| {
            cols.iter()
                .map(|&c| r.policies[c].figures.get(&f.key).map_or_else(String::new, cell))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(j, &c)| {
            cells
                .iter()
                .map(|row| row[j].chars().count())
                .chain([r.policies[c].label.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{}{s}", " ".repeat(w.saturating_sub(s.chars().count())));
    out.push_str(&" ".repeat(w0));
    for (j, &c) in cols.iter().enumerate() {
        out.push_str("  ");
        out.push_str(&pad(&r.policies[c].label, widths[j]));
    }
    out.push('\n');
    for (i, l) in labels.iter().enumerate() {
        out.push_str(l);
        out.push_str(&" ".repeat(w0 - l.chars().count()));
        for (j, c) in cells[i].iter().enumerate() {
            out.push_str("  ");
            out.push_str(&pad(c, widths[j]));
        }
        out.push('\n');
    }
}

/// The whole terminal output of a comparison.
pub fn compare_summary_string(r: &CompareReport) -> String {
    let mut out = format!(
        "{} on {}: {} row(s) x {} seed(s) ({}), {:.1} h simulated per run\n",
        r.scenario,
        r.device,
        r.policies.len(),
        r.seeds.len(),
        r.seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        r.simulated_seconds / 3600.0
    );
    out.push_str("Mean ±half-width of the Student t 95% interval over the seeds (— = not measured).\n");
    let all: Vec<usize> = (0..r.policies.len()).collect();
    for cols in all.chunks(COLUMNS_PER_BLOCK) {
        out.push('\n');
        block(&mut out, r, cols, &mean_ci);
    }
    if r.row(&r.baseline).is_some() && r.policies.len() > 1 {
        out.push_str(&format!(
            "\nDifference from {} (paired by seed, paired t-test at 5%): n.s. = 95% interval crosses 0, \
             same = equal on every seed\n",
            r.baseline
        ));
        let others: Vec<usize> = all
            .into_iter()
            .filter(|&i| r.policies[i].label != r.baseline)
            .collect();
        for cols in others.chunks(COLUMNS_PER_BLOCK) {
            out.push('\n');
            block(&mut out, r, cols, &difference);
        }
    }
    out
}
