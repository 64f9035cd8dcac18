//! One fuzz target per parser. Each runs its input through the same public function the CLI
//! uses to read that kind of file, then checks the error contract: a bad input gives a one-line
//! error (naming the file where the parser is given one), never a panic. A contract breach is
//! returned as `Err`; a panic propagates to the caller, which catches it.

use crate::mutate::Kind;
use std::borrow::Cow;

/// The parsers under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `workload::scenario::Scenario::from_toml_str` then `resolve` (what `run <file>` does).
    Scenario,
    /// `device::DeviceProfile::from_toml_str`.
    Device,
    /// `apps::AppProfile::from_toml_str`.
    App,
    /// `runtime::hprof::parse`, then the summary, class histogram and blueprint built from it.
    Hprof,
    /// `content::Corpus::from_bytes`, then loading the pages into a content store.
    Corpus,
    /// `content::CostTable::from_toml_str` (the `--costs` table).
    Costs,
    /// Every trace reader (`oracle`, `csv`, Ariadne swap-out and swap-in) on the same bytes.
    Trace,
}

pub const ALL: [Target; 7] = [
    Target::Scenario,
    Target::Device,
    Target::App,
    Target::Costs,
    Target::Hprof,
    Target::Corpus,
    Target::Trace,
];

/// File name handed to parsers that take one; errors must name it.
const FILE: &str = "fuzz-input";

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Scenario => "scenario",
            Target::Device => "device",
            Target::App => "app",
            Target::Costs => "costs",
            Target::Hprof => "hprof",
            Target::Corpus => "corpus",
            Target::Trace => "trace",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        ALL.into_iter().find(|t| t.name() == s)
    }

    pub fn kind(self) -> Kind {
        match self {
            Target::Scenario | Target::Device | Target::App | Target::Costs => Kind::Text,
            Target::Hprof | Target::Corpus | Target::Trace => Kind::Binary,
        }
    }

    pub fn seeds(self) -> Vec<Vec<u8>> {
        use crate::seeds;
        match self {
            Target::Scenario => seeds::scenario(),
            Target::Device => seeds::device(),
            Target::App => seeds::app(),
            Target::Costs => vec![content::CostTable::builtin().to_toml_string().into_bytes()],
            Target::Hprof => seeds::hprof(),
            Target::Corpus => seeds::corpus(),
            Target::Trace => seeds::trace(),
        }
    }

    /// A target-specific touch-up after mutation: half the corpus inputs get a correct trailing
    /// checksum so mutations reach the fields behind it.
    pub fn fix_up(self, b: &mut [u8], index: u64) {
        if self == Target::Corpus && index.is_multiple_of(2) && b.len() >= 8 {
            let n = b.len() - 8;
            let sum = content::checksum(&b[..n]);
            b[n..].copy_from_slice(&sum.to_le_bytes());
        }
    }

    /// Run one input: `Ok(true)` if the parser accepted it, `Ok(false)` if it gave a proper
    /// error; `Err` describes a breach of the error contract.
    pub fn run(self, b: &[u8]) -> Result<bool, String> {
        match self {
            Target::Scenario => {
                let text = lossy(b);
                let r = workload::scenario::Scenario::from_toml_str(&text, FILE)
                    .and_then(|s| s.resolve().map(drop));
                error_ok(r, Some(FILE))
            }
            Target::Device => error_ok(
                device::DeviceProfile::from_toml_str(&lossy(b), FILE).map(drop),
                Some(FILE),
            ),
            Target::App => error_ok(
                apps::AppProfile::from_toml_str(&lossy(b), FILE).map(drop),
                Some(FILE),
            ),
            Target::Costs => error_ok(
                content::CostTable::from_toml_str(&lossy(b), FILE).map(drop),
                Some(FILE),
            ),
            Target::Hprof => {
                let r = runtime::hprof::parse(b, FILE).map(|d| {
                    let _ = d.summary();
                    let _ = d.class_histogram();
                    let _ = d.blueprint().total_bytes();
                });
                error_ok(r, Some(FILE))
            }
            Target::Corpus => {
                let r = content::Corpus::from_bytes(b).map(|c| {
                    let mut store = content::ContentStore::new();
                    let ids = c.load_into(&mut store, true);
                    assert_eq!(ids.len(), c.len());
                });
                error_ok(r, None)
            }
            Target::Trace => {
                let named = Some("byte offset");
                let a = error_ok(trace::oracle::read(b, |_| {}), named)?;
                let c = error_ok(trace::csv::read(b, |_| {}), named)?;
                let o = error_ok(trace::ariadne::read_swapout(b, |_, _| {}), named)?;
                let i = error_ok(trace::ariadne::read_swapin(b, |_| {}), named)?;
                Ok(a || c || o || i)
            }
        }
    }
}

/// The CLI reads text files as UTF-8; invalid bytes are replaced so the parser still sees input.
fn lossy(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Accepted (`true`), or an error that is one line and contains `must_name`.
fn error_ok<T, E: std::fmt::Display>(r: Result<T, E>, must_name: Option<&str>) -> Result<bool, String> {
    let Err(e) = r else { return Ok(true) };
    let msg = e.to_string();
    if msg.contains('\n') || msg.contains('\r') {
        return Err(format!("multi-line error: {msg:?}"));
    }
    if let Some(n) = must_name {
        if !msg.contains(n) {
            return Err(format!("error does not name {n:?}: {msg:?}"));
        }
    }
    Ok(false)
}
