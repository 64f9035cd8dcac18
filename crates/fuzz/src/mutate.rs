//! The mutation engine, written by hand (cargo-fuzz/libFuzzer needs nightly Rust; this harness
//! runs on stable). It is deliberately simple: no coverage feedback, no corpus growth. Input `i`
//! of a run is a pure function of (target seeds, run seed, `i`): a seed file picked at random with
//! 1–8 stacked mutations (bit flips, byte set/insert/delete/duplicate, splice with another seed,
//! truncation, interesting integers at random offsets, and for text targets token-aware edits of
//! TOML lines and numbers). Being a pure function is what lets the supervisor rebuild the input a
//! killed worker was running without the worker writing every input to disk.

/// SplitMix64: small, fast and good enough to drive mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`; modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }
}

/// Integers that tend to sit on boundaries of length, count and offset checks.
const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    16,
    24,
    50,
    127,
    128,
    255,
    256,
    4095,
    4096,
    4097,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x1_0000,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0x7FFF_FFFF_FFFF_FFFF,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// Replacement values for TOML values and numbers in text.
const TEXT_VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "-0",
    "0.0",
    "1e9",
    "1e300",
    "1e400",
    "-1e400",
    "nan",
    "inf",
    "-inf",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1000000",
    "\"\"",
    "\"x\"",
    "[]",
    "[1, 2]",
    "{}",
    "{ a = 1 }",
    "true",
    "\"fleet-4096\"",
    "\"pixel3\"",
    "\"generated\"",
    "1979-05-27T07:32:00Z",
];

/// Fragments inserted into text: TOML syntax and things parsers stumble on.
const TEXT_TOKENS: &[&str] = &[
    "[", "]", "[[", "]]", "=", "\"", "'", "\"\"\"", "#", ",", ".", "\n", "\r\n", "\\", "\\u0000", "[apps]",
    "[[apps]]", "[java]", "[device]", " = ", "a.b", "\u{feff}", "\u{0}", "é",
];

/// What kind of bytes a target reads (text targets also get token-aware edits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Binary,
}

/// Largest input the engine produces (insertions and splices stop growing past it).
pub const MAX_LEN: usize = 1 << 20;

/// Input `index` of a run: a seed with stacked mutations. Deterministic in its arguments.
pub fn input(seeds: &[Vec<u8>], kind: Kind, run_seed: u64, index: u64) -> Vec<u8> {
    let mut rng = Rng::new(run_seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    rng.next_u64();
    let mut b = seeds[rng.below(seeds.len())].clone();
    let most = if rng.chance(1, 4) { 8 } else { 3 };
    let n = 1 + rng.below(most);
    for _ in 0..n {
        mutate_once(&mut b, seeds, kind, &mut rng);
    }
    b
}

fn mutate_once(b: &mut Vec<u8>, seeds: &[Vec<u8>], kind: Kind, rng: &mut Rng) {
    let ops = if kind == Kind::Text { 13 } else { 9 };
    match rng.below(ops) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
        }
        1 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = rng.next_u64() as u8;
        }
        2 if b.len() < MAX_LEN => {
            let i = rng.below(b.len() + 1);
            let k = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..k).map(|_| rng.next_u64() as u8).collect();
            b.splice(i..i, bytes);
        }
        3 if !b.is_empty() => {
            let i = rng.below(b.len());
            let k = 1 + rng.below((b.len() - i).min(64));
            b.drain(i..i + k);
        }
        4 if !b.is_empty() && b.len() < MAX_LEN => {
            // Duplicate a chunk elsewhere (repeats records and table headers).
            let i = rng.below(b.len());
            let k = 1 + rng.below((b.len() - i).min(256));
            let chunk = b[i..i + k].to_vec();
            let at = rng.below(b.len() + 1);
            b.splice(at..at, chunk);
        }
        5 => {
            // Splice: our prefix, another seed's suffix.
            let other = &seeds[rng.below(seeds.len())];
            let cut = rng.below(b.len() + 1);
            let from = rng.below(other.len() + 1);
            b.truncate(cut);
            let room = MAX_LEN.saturating_sub(b.len());
            b.extend_from_slice(&other[from..other.len().min(from + room)]);
        }
        6 => {
            let cut = rng.below(b.len() + 1);
            b.truncate(cut);
        }
        7 | 8 if !b.is_empty() => {
            // An interesting integer (1, 2, 4 or 8 bytes, either endianness), sometimes ±1.
            let v = INTERESTING[rng.below(INTERESTING.len())].wrapping_add([0, 1, u64::MAX][rng.below(3)]);
            let width = [1, 2, 4, 8][rng.below(4)];
            let (be, le) = (v.to_be_bytes(), v.to_le_bytes());
            let src: &[u8] = if rng.chance(1, 2) {
                &be[8 - width..]
            } else {
                &le[..width]
            };
            let i = rng.below(b.len());
            let end = (i + width).min(b.len());
            b[i..end].copy_from_slice(&src[..end - i]);
        }
        9 => text_replace_value(b, rng),
        10 => text_replace_number(b, rng),
        11 => text_lines(b, rng),
        12 => {
            let t = TEXT_TOKENS[rng.below(TEXT_TOKENS.len())].as_bytes();
            let i = rng.below(b.len() + 1);
            b.splice(i..i, t.iter().copied());
        }
        _ => {}
    }
}

/// Line ranges (start, end excluding the newline).
fn lines(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push((s, i));
            s = i + 1;
        }
    }
    if s < b.len() {
        out.push((s, b.len()));
    }
    out
}

/// `key = value` → `key = <interesting value>` on a random line that has one.
fn text_replace_value(b: &mut Vec<u8>, rng: &mut Rng) {
    let ls: Vec<_> = lines(b)
        .into_iter()
        .filter(|&(s, e)| b[s..e].contains(&b'='))
        .collect();
    if ls.is_empty() {
        return;
    }
    let (s, e) = ls[rng.below(ls.len())];
    let Some(eq) = b[s..e].iter().position(|&c| c == b'=') else {
        return;
    };
    let v = format!(" {}", TEXT_VALUES[rng.below(TEXT_VALUES.len())]);
    b.splice(s + eq + 1..e, v.into_bytes());
}

/// A run of digits somewhere → an interesting number.
fn text_replace_number(b: &mut Vec<u8>, rng: &mut Rng) {
    let digits: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit()).collect();
    if digits.is_empty() {
        return;
    }
    let mut s = digits[rng.below(digits.len())];
    while s > 0 && b[s - 1].is_ascii_digit() {
        s -= 1;
    }
    let mut e = s;
    while e < b.len() && (b[e].is_ascii_digit() || b[e] == b'.') {
        e += 1;
    }
    let v = if rng.chance(1, 2) {
        TEXT_VALUES[rng.below(TEXT_VALUES.len())].to_string()
    } else {
        INTERESTING[rng.below(INTERESTING.len())].to_string()
    };
    b.splice(s..e, v.into_bytes());
}

/// Drop, duplicate or swap whole lines (tables and keys appear twice, go missing, move).
fn text_lines(b: &mut Vec<u8>, rng: &mut Rng) {
    let ls = lines(b);
    if ls.is_empty() {
        return;
    }
    let mut v: Vec<Vec<u8>> = ls.iter().map(|&(s, e)| b[s..e].to_vec()).collect();
    let i = rng.below(v.len());
    match rng.below(3) {
        0 => {
            v.remove(i);
        }
        1 => {
            let l = v[i].clone();
            v.insert(rng.below(v.len() + 1), l);
        }
        _ => {
            let j = rng.below(v.len());
            v.swap(i, j);
        }
    }
    *b = v.join(&b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_deterministic_and_vary() {
        let seeds = vec![b"a = 1\nb = \"x\"\n[t]\nc = 2.5\n".to_vec(), vec![0u8; 64]];
        let a: Vec<_> = (0..200).map(|i| input(&seeds, Kind::Text, 7, i)).collect();
        let b: Vec<_> = (0..200).map(|i| input(&seeds, Kind::Text, 7, i)).collect();
        assert_eq!(a, b);
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(distinct.len() > 150, "{} distinct", distinct.len());
        assert_ne!(input(&seeds, Kind::Text, 8, 0), a[0]);
    }
}
