//! The report: Header Hero's numbers (Files, Total Lines, Total Parsed, Blowup), one entry per
//! file with lines, TUs reaching it, contributed lines, transitive includes; header hubs; the
//! detail view data (direct includers / includes with reach counts); include cycles; missing
//! files; errors. Also the queries a UI needs without rescanning: [`Report::why_chain`] (shortest
//! include chain with line numbers) and [`Report::what_if`] (remove an edge or empty a header).
//!
//! Reachability is computed exactly (SCC condensation + bitsets), not with Header Hero's memoised
//! DFS that under-counts inside include cycles.

use super::Mode;
use super::util::FxMap;
use serde::Serialize;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

/// One file in the graph. `counted` files are the project's (under a root or a user include dir);
/// the others are system headers followed for their macros only.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub path: String,
    #[serde(skip)]
    pub abs: PathBuf,
    pub lines: u32,
    pub counted: bool,
    pub is_tu: bool,
}

/// Per-TU reach, in node indices.
#[derive(Clone, Debug, Default)]
pub struct TuReach {
    pub node: u32,
    /// Every file the TU opened, itself included.
    pub closure: Vec<u32>,
    /// Include edges taken in this TU (preprocessed mode), as indices into [`Graph::edge_tab`].
    /// `None` in all-branches mode, where the union graph is the TU's graph.
    pub edges: Option<Arc<[u32]>>,
    /// Its configuration (index into [`Report::configs`]; 0 without configurations). A file
    /// scanned in two configurations is two TUs.
    pub config: u32,
}

impl TuReach {
    /// Counts this TU into a report's tallies: marks the counted files it opens (and itself) in
    /// `in_union`, adds one to `tu_count` of each header, and returns its lines parsed (its
    /// share of Total Parsed). The one Total Parsed loop: the report's and each configuration's.
    fn count_into(&self, g: &Graph, in_union: &mut [bool], tu_count: &mut [u32]) -> u64 {
        let mut parsed = 0u64;
        in_union[self.node as usize] = true;
        for &f in &self.closure {
            let fi = f as usize;
            if !g.nodes[fi].counted && !g.nodes[fi].is_tu {
                continue;
            }
            in_union[fi] = true;
            parsed += g.nodes[fi].lines as u64;
            if f != self.node {
                tu_count[fi] += 1;
            }
        }
        parsed
    }
}

/// The include graph behind a report.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// Direct includes per node: (to, line), sorted, deduplicated by target.
    pub out: Vec<Vec<(u32, u32)>>,
    /// Direct includers per node: (from, line).
    pub inc: Vec<Vec<(u32, u32)>>,
    pub tus: Vec<TuReach>,
    /// The edges [`TuReach::edges`] index: (from, line, to). Some may belong to no TU of this
    /// report (a session's table only grows).
    pub edge_tab: Vec<(u32, u32, u32)>,
}

impl Graph {
    /// True when `other` has the same files (path, lines) and translation units (file,
    /// configuration, closure) in the same order: what a measurement ([`crate::timing::Timing`],
    /// indexed by node and TU) depends on.
    pub fn same_files(&self, other: &Graph) -> bool {
        self.nodes.len() == other.nodes.len()
            && self.tus.len() == other.tus.len()
            && self
                .nodes
                .iter()
                .zip(&other.nodes)
                .all(|(a, b)| a.abs == b.abs && a.lines == b.lines && a.is_tu == b.is_tu)
            && self
                .tus
                .iter()
                .zip(&other.tus)
                .all(|(a, b)| a.node == b.node && a.config == b.config && a.closure == b.closure)
    }
}

/// Why a what-if cannot be evaluated (the files are named as the user gave them).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WhatIfError {
    #[error("no file matching `{0}`")]
    NoFile(String),
    #[error("`{from}` does not include `{to}`")]
    NotIncluded { from: String, to: String },
}

/// Why no include chain can be shown ([`Report::why_chain`]; files named as the user gave them).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WhyError {
    #[error("no file matching `{0}` in the report")]
    NoFile(String),
    #[error("`{0}` is not a translation unit")]
    NotATu(String),
    #[error("`{header}` is not reached from {}", from.as_deref().unwrap_or("any translation unit"))]
    NotReached {
        header: String,
        from: Option<String>,
    },
}

/// One row of the per-file table (every counted file, not a top N).
#[derive(Clone, Debug, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub lines: u32,
    pub tu: bool,
    /// Translation units that reach this file (a TU does not count itself).
    pub tu_count: u32,
    /// lines × tu_count ("Biggest Contributors").
    pub contributed: u64,
    /// Number of files this one includes directly or indirectly (itself excluded).
    pub transitive_includes: u32,
    /// Σ lines of those files.
    pub transitive_lines: u64,
    /// Number of files that include this one directly or indirectly.
    pub included_by_count: u32,
    /// transitive_includes × tu_count ("Header Hubs").
    pub hub_score: u64,
    /// Direct includes (paths).
    pub includes: Vec<String>,
    /// Direct includers (paths).
    pub included_by: Vec<String>,
    /// With `--churn`: its rebuild cost (`churn_commits`, `churn_tu_rebuilds` in the JSON).
    #[serde(flatten)]
    pub churn: Option<FileChurn>,
    /// With several configurations: the TUs reaching it in each (the order of
    /// [`Report::configs`]); `tu_count` is their sum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tu_count_by_config: Option<Vec<u32>>,
    /// With several configurations: lines × TUs in each; `contributed` is their sum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contributed_by_config: Option<Vec<u64>>,
    /// With measured costs (`--measure`, `--time-trace`; module `timing`): its exclusive
    /// frontend ms per TU that includes it, and the seconds it adds to the build (× `tu_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_contributed: Option<f64>,
    /// With measured costs: false when no measured TU included it (its cost is then the
    /// measured headers' ms per line × its lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_measured: Option<bool>,
    #[serde(skip)]
    pub node: u32,
}

/// One file's rebuild cost from history (`--churn`, module `churn`); flattened into its entry.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FileChurn {
    /// Commits of the period that changed it.
    pub churn_commits: u32,
    /// The TU rebuilds those commits caused (commits × TUs reaching it in the preprocessed
    /// closures).
    pub churn_tu_rebuilds: u64,
}

/// The tree's rebuild cost from history (`--churn`); flattened into the report: the period in
/// days, the commits in it that changed a file of the tree, the TU rebuilds they caused (each TU
/// once per commit) and per week.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TreeChurn {
    pub churn_days: u32,
    pub churn_commits: usize,
    pub churn_tu_rebuilds: u64,
    pub churn_tu_rebuilds_per_week: f64,
}

/// One configuration's own figures in a scan of several (each equals a scan of that
/// configuration alone; the report's totals are their sums, its files their union).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConfigSummary {
    pub name: String,
    pub translation_units: usize,
    pub files: usize,
    pub total_lines: u64,
    pub total_parsed: u64,
    pub blowup: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Hub {
    pub path: String,
    pub score: u64,
    pub transitive_includes: u32,
    pub tu_count: u32,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct MissingEntry {
    /// The include as written.
    pub include: String,
    pub angle: bool,
    /// True when it looks like a system header (angle include not found in any given dir).
    pub likely_system: bool,
    /// Number of TUs that tried to include it.
    pub tu_count: u32,
    pub tried_by: Vec<Site>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct ErrorEntry {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// A file named like a translation unit that is a FIFO, a device or a socket: never opened
/// (opening a FIFO blocks, a device reads forever), listed so that it is not skipped silently.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkippedFile {
    pub path: String,
    /// What it is, in words ("a FIFO", "a character device", ...).
    pub kind: String,
}

/// Side-by-side numbers of the other mode.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub mode: Mode,
    pub files: usize,
    pub translation_units: usize,
    pub total_lines: u64,
    pub total_parsed: u64,
    pub blowup: f64,
}

/// Counters about the scan itself.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScanStats {
    pub files_read: usize,
    pub files_reused: usize,
    pub tus_evaluated: usize,
    pub tus_reused: usize,
    pub cache_used: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub mode: Mode,
    pub files: usize,
    pub translation_units: usize,
    pub total_lines: u64,
    pub total_parsed: u64,
    pub blowup: f64,
    pub scan_seconds: f64,
    /// Every counted file, sorted by contributed lines (descending), then path.
    pub headers: Vec<FileEntry>,
    pub hubs: Vec<Hub>,
    pub cycles: Vec<Vec<String>>,
    pub missing: Vec<MissingEntry>,
    pub errors: Vec<ErrorEntry>,
    /// Special files skipped by the scan (see [`SkippedFile`]); `skipped_special_count` in the
    /// JSON is their number.
    pub skipped_special: Vec<SkippedFile>,
    pub skipped_special_count: usize,
    pub notes: Vec<String>,
    pub other_mode: Option<Summary>,
    pub stats: ScanStats,
    /// With `--churn`: the tree's rebuild cost (`churn_days`, `churn_commits`, … in the JSON).
    #[serde(flatten)]
    pub churn: Option<TreeChurn>,
    /// With configurations (`--config`): each one's figures, in the order given. The totals
    /// above are the combined view (TUs and Total Parsed summed, files united).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<ConfigSummary>,
    /// With `--cuts` (see `headers::cuts`): every directive's and header's saving, best first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuts: Option<Vec<Cut>>,
    /// With measured costs (module `timing`): the build's predicted frontend seconds (every TU
    /// of every configuration), the TUs measured, and each TU's predicted / measured ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_frontend_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_tus: Option<usize>,
    #[serde(rename = "tus", skip_serializing_if = "Option::is_none")]
    pub tu_times: Option<Vec<TuTime>>,
    /// With `--pch` (module `pch`): the advised precompiled header and, with `--verify-pch`,
    /// its check by real builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pch: Option<PchAdvice>,
    #[serde(skip)]
    pub graph: Graph,
    #[serde(skip)]
    by_node: FxMap<u32, usize>,
}

/// What a cut removes (module `cuts` computes them; the type lives here, with the report
/// that carries them, so that `cuts` depends on `report` and not the other way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CutKind {
    /// One `#include` directive (`includer`, `line`) naming `included`.
    Include,
    /// The whole of `included` (the file stays, empty): `includer` is empty, `line` 0.
    EmptyHeader,
}

/// One TU's frontend time (module `timing`): predicted from its own cost and its closure's
/// header costs, and measured when it was.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TuTime {
    pub path: String,
    /// Its configuration's name (with `--config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    pub predicted_ms: f64,
    pub measured_ms: Option<f64>,
}

/// The precompiled header advised for one configuration (module `pch` computes it; the type
/// lives here, with the report that carries it, as [`Cut`] does). Seconds are frontend
/// seconds of the configuration's TUs, from the measured costs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PchAdvice {
    /// Its configuration's name (with `--config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The headers `pch.h` includes, in the order chosen (best first).
    pub headers: Vec<PchHeader>,
    /// Files in the PCH (the headers and everything they include) and their parse cost once.
    pub files: usize,
    pub content_ms: f64,
    /// Per clean build: seconds the TUs no longer spend parsing the PCH's files, the seconds
    /// every TU spends loading the PCH, the PCH's own build, and the net saving.
    pub saved_s: f64,
    pub load_s: f64,
    pub build_s: f64,
    pub net_s: f64,
    /// With history (`--churn`): the period, the commits in it that changed a file of the PCH
    /// (each rebuilds the PCH and every TU), the extra rebuild seconds they cost, and the net
    /// saving over the period's builds (one clean build and one build per commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn_days: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn_commits: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_net_s: Option<f64>,
    /// The same number of headers taken by Total Parsed (lines × TUs), and its predicted net
    /// saving per clean build: the choice the advice is measured against.
    pub naive: Vec<String>,
    pub naive_net_s: f64,
    /// `pch.h`'s text, and the flags that build and use it (clang; g++).
    pub pch_h: String,
    pub build_flags: Vec<String>,
    pub use_flags_clang: Vec<String>,
    pub use_flags_gcc: Vec<String>,
    /// With `--verify-pch`: the advice and the naive choice built and measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<PchCheck>,
}

/// One header of an advised PCH.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PchHeader {
    pub path: String,
    #[serde(skip)]
    pub abs: PathBuf,
    /// TUs of the configuration reaching it, and its own exclusive cost per TU.
    pub tus: u32,
    pub cost_ms: f64,
    /// Files it brought into the PCH (itself and what it includes that was not there yet).
    pub files_added: usize,
    /// What taking it added to the objective (net seconds, churn included when known).
    pub gain_s: f64,
}

/// `--verify-pch`: TUs compiled (`-fsyntax-only`) without a PCH, with the advised one and with
/// the naive one, CPU time of each run (load on the machine does not count).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PchCheck {
    /// The TUs compiled all three ways (those whose PCH runs failed are left out, in `notes`).
    pub tus: usize,
    pub without_s: f64,
    pub advised: PchMeasured,
    pub naive: PchMeasured,
    /// Per TU compiled all three ways, in report order: what each run cost and what was
    /// predicted (which TUs the model gets wrong).
    pub per_tu: Vec<PchTuCheck>,
    pub notes: Vec<String>,
}

/// One verified TU: CPU ms of its three runs and the predicted savings (measured load).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PchTuCheck {
    pub path: String,
    pub without_ms: f64,
    pub advised_ms: f64,
    pub naive_ms: f64,
    pub advised_predicted_ms: f64,
    pub naive_predicted_ms: f64,
}

/// One PCH's measured and predicted saving over the verified TUs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PchMeasured {
    /// CPU seconds building the PCH once.
    pub build_s: f64,
    pub with_s: f64,
    /// without − with, summed over the TUs; the prediction for the same TUs; their difference
    /// in % of the measurement.
    pub measured_saving_s: f64,
    pub predicted_saving_s: f64,
    pub error_percent: f64,
    /// CPU ms each TU pays to load this PCH, measured (an empty TU with and without it, the
    /// medians of a few runs), and that over the model's parse cost of its content: the
    /// prediction above charges this load instead of the advice's fraction.
    pub load_ms: f64,
    pub content_ms: f64,
    pub load_fraction: f64,
    /// The saving as the advice predicted it (its load fraction, nothing measured).
    pub advice_predicted_saving_s: f64,
}

/// One candidate edit with its saving. Serialized in the JSON's `cuts` array.
#[derive(Clone, Debug, Serialize)]
pub struct Cut {
    pub kind: CutKind,
    pub includer: String,
    pub line: u32,
    pub included: String,
    /// Total Parsed lines saved over all translation units (negative when the edit makes other
    /// includes active: only possible in an exact figure).
    pub lines_saved: i64,
    /// Translation units whose Total Parsed drops.
    pub tus_affected: u32,
    /// The figure is the preprocessor's: the affected TUs were evaluated again with the edit
    /// (always true in "all branches" mode, which has no macros).
    pub exact: bool,
    /// A removed file defines a macro that another file of the TU tests in an `#if` (so the
    /// estimate may be off until confirmed).
    pub macros_tested_later: bool,
    /// The includer includes the same file on another line too.
    pub other_directives: bool,
    /// With measured costs (module `timing`): the frontend seconds the edit saves over every
    /// TU it touches, estimated from the include graphs (never confirmed exactly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_saved: Option<f64>,
    /// Graph nodes of the includer (the header for [`CutKind::EmptyHeader`]) and the included
    /// file, and of the affected TUs.
    #[serde(skip)]
    pub from: u32,
    #[serde(skip)]
    pub to: u32,
    #[serde(skip)]
    pub tus: Vec<u32>,
    /// The configuration of each of `tus` (index into [`Report::configs`]; all 0 without
    /// configurations): a file scanned in two configurations is two TUs, listed twice.
    #[serde(skip)]
    pub tu_configs: Vec<u32>,
}

/// Raw per-mode input to [`Report::build`].
pub struct ModeData {
    pub mode: Mode,
    /// Configuration names, in [`TuReach::config`] order (empty: a scan of one).
    pub configs: Vec<String>,
    pub graph: Graph,
    /// (includer node, line, name, angle)
    pub missing: Vec<(u32, u32, String, bool)>,
    /// Which TUs hit each missing (name, angle).
    pub missing_tus: FxMap<(String, bool), u32>,
    pub errors: Vec<(u32, u32, String)>,
    pub skipped: Vec<SkippedFile>,
}

/// A step of an include chain: `file` includes the next step's file at `line` (0 for the last).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ChainStep {
    pub file: String,
    pub line: u32,
}

/// A hypothetical change evaluated on the existing graph.
#[derive(Clone, Debug)]
pub enum WhatIf {
    /// Remove the `#include` edge from the first file to the second.
    RemoveInclude { from: String, to: String },
    /// Make a header empty (0 lines, no includes).
    EmptyFile(String),
}

#[derive(Clone, Debug, Serialize)]
pub struct WhatIfResult {
    pub total_parsed_before: u64,
    pub total_parsed_after: u64,
    pub saved: u64,
    pub saved_percent: f64,
    pub total_lines_after: u64,
    pub files_after: usize,
    pub tus_affected: usize,
    /// In "preprocessed" mode the TU's own include edges are reused; a removed include that
    /// also changed macros (and so other includes) is not re-evaluated.
    pub note: String,
}

struct Bits {
    words: usize,
    data: Vec<u64>,
}

impl Bits {
    fn row(&self, i: usize) -> &[u64] {
        &self.data[i * self.words..(i + 1) * self.words]
    }
}

/// Iterative Tarjan; returns the SCC id per node and the SCCs in reverse topological order
/// (an SCC comes after every SCC it reaches).
fn tarjan(n: usize, out: &[Vec<(u32, u32)>]) -> (Vec<u32>, Vec<Vec<u32>>) {
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on = vec![false; n];
    let mut st: Vec<u32> = Vec::new();
    let mut comp = vec![u32::MAX; n];
    let mut sccs: Vec<Vec<u32>> = Vec::new();
    let mut next = 0u32;
    let mut call: Vec<(u32, usize)> = Vec::new();
    for s in 0..n {
        if index[s] != u32::MAX {
            continue;
        }
        call.push((s as u32, 0));
        index[s] = next;
        low[s] = next;
        next += 1;
        st.push(s as u32);
        on[s] = true;
        while let Some(&mut (v, ref mut ei)) = call.last_mut() {
            let v = v as usize;
            if *ei < out[v].len() {
                let w = out[v][*ei].0 as usize;
                *ei += 1;
                if index[w] == u32::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    st.push(w as u32);
                    on[w] = true;
                    call.push((w as u32, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(p, _)) = call.last() {
                    low[p as usize] = low[p as usize].min(low[v]);
                }
                if low[v] == index[v] {
                    let id = sccs.len() as u32;
                    let mut c = Vec::new();
                    loop {
                        let w = st.pop().unwrap();
                        on[w as usize] = false;
                        comp[w as usize] = id;
                        c.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    sccs.push(c);
                }
            }
        }
    }
    (comp, sccs)
}

fn reach_bits(n: usize, out: &[Vec<(u32, u32)>], comp: &[u32], sccs: &[Vec<u32>]) -> Bits {
    let words = n.div_ceil(64).max(1);
    let mut bits = Bits {
        words,
        data: vec![0u64; words * sccs.len()],
    };
    for (ci, members) in sccs.iter().enumerate() {
        let mut row = vec![0u64; words];
        let cyclic = members.len() > 1;
        for &m in members {
            if cyclic {
                row[m as usize / 64] |= 1 << (m % 64);
            }
            for &(w, _) in &out[m as usize] {
                let cw = comp[w as usize] as usize;
                row[w as usize / 64] |= 1 << (w % 64);
                if cw != ci {
                    let r = bits.row(cw);
                    for (a, b) in row.iter_mut().zip(r) {
                        *a |= *b;
                    }
                }
            }
        }
        bits.data[ci * words..(ci + 1) * words].copy_from_slice(&row);
    }
    bits
}

fn for_bits(row: &[u64], mut f: impl FnMut(usize)) {
    for (wi, &w) in row.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            let b = w.trailing_zeros() as usize;
            f(wi * 64 + b);
            w &= w - 1;
        }
    }
}

/// The per-file table: every file some TU reaches, with its transitive includes (reachability
/// bitsets over the graph's condensation) and its direct includes and includers.
fn file_entries(
    g: &Graph,
    comp: &[u32],
    sccs: &[Vec<u32>],
    in_union: &[bool],
    tu_count: &[u32],
) -> Vec<FileEntry> {
    let n = g.nodes.len();
    let bits = reach_bits(n, &g.out, comp, sccs);
    let mut trans_n = vec![0u32; n];
    let mut trans_l = vec![0u64; n];
    let mut inc_by = vec![0u32; n];
    for v in (0..n).filter(|&v| in_union[v]) {
        let (mut c, mut l) = (0u32, 0u64);
        for_bits(bits.row(comp[v] as usize), |b| {
            if b != v && g.nodes[b].counted {
                c += 1;
                l += g.nodes[b].lines as u64;
                if g.nodes[v].counted {
                    inc_by[b] += 1;
                }
            }
        });
        trans_n[v] = c;
        trans_l[v] = l;
    }
    let name = |i: u32| g.nodes[i as usize].path.clone();
    (0..n)
        .filter(|&v| in_union[v])
        .map(|v| {
            let node = &g.nodes[v];
            let tc = tu_count[v];
            FileEntry {
                path: node.path.clone(),
                lines: node.lines,
                tu: node.is_tu,
                tu_count: tc,
                contributed: node.lines as u64 * tc as u64,
                transitive_includes: trans_n[v],
                transitive_lines: trans_l[v],
                included_by_count: inc_by[v],
                hub_score: trans_n[v] as u64 * tc as u64,
                includes: g.out[v]
                    .iter()
                    .filter(|e| g.nodes[e.0 as usize].counted)
                    .map(|e| name(e.0))
                    .collect(),
                included_by: g.inc[v]
                    .iter()
                    .filter(|e| g.nodes[e.0 as usize].counted)
                    .map(|e| name(e.0))
                    .collect(),
                churn: None,
                tu_count_by_config: None,
                contributed_by_config: None,
                cost_ms: None,
                seconds_contributed: None,
                cost_measured: None,
                node: v as u32,
            }
        })
        .collect()
}

/// Per-configuration counts of a report whose TUs come from several configurations.
struct ByConfig {
    /// Per configuration, per node: the TUs of that configuration reaching it.
    tu_count: Vec<Vec<u32>>,
    summaries: Vec<ConfigSummary>,
}

impl ByConfig {
    /// The same counting as [`Report::build`]'s, once per configuration.
    fn new(g: &Graph, names: &[String]) -> ByConfig {
        let n = g.nodes.len();
        let mut tu_count = vec![vec![0u32; n]; names.len()];
        let mut in_union = vec![vec![false; n]; names.len()];
        let mut summaries: Vec<ConfigSummary> = names
            .iter()
            .map(|name| ConfigSummary {
                name: name.clone(),
                translation_units: 0,
                files: 0,
                total_lines: 0,
                total_parsed: 0,
                blowup: 0.0,
            })
            .collect();
        for t in &g.tus {
            let c = t.config as usize;
            if c >= names.len() {
                continue;
            }
            summaries[c].translation_units += 1;
            summaries[c].total_parsed += t.count_into(g, &mut in_union[c], &mut tu_count[c]);
        }
        for (s, u) in summaries.iter_mut().zip(&in_union) {
            s.files = u.iter().filter(|&&b| b).count();
            s.total_lines = (0..n)
                .filter(|&v| u[v])
                .map(|v| g.nodes[v].lines as u64)
                .sum();
            s.blowup = if s.total_lines > 0 {
                s.total_parsed as f64 / s.total_lines as f64
            } else {
                0.0
            };
        }
        ByConfig {
            tu_count,
            summaries,
        }
    }

    fn fill(&self, g: &Graph, headers: &mut [FileEntry]) {
        if self.summaries.is_empty() {
            return;
        }
        for h in headers {
            let v = h.node as usize;
            let counts: Vec<u32> = self.tu_count.iter().map(|c| c[v]).collect();
            h.contributed_by_config = Some(
                counts
                    .iter()
                    .map(|&c| g.nodes[v].lines as u64 * c as u64)
                    .collect(),
            );
            h.tu_count_by_config = Some(counts);
        }
    }
}

/// The hubs among `headers` (a hub score above 0), best first.
fn hubs_of(headers: &[FileEntry]) -> Vec<Hub> {
    let mut hubs: Vec<Hub> = headers
        .iter()
        .filter(|h| h.hub_score > 0)
        .map(|h| Hub {
            path: h.path.clone(),
            score: h.hub_score,
            transitive_includes: h.transitive_includes,
            tu_count: h.tu_count,
        })
        .collect();
    hubs.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    hubs
}

/// Missing includes grouped by (name, written with <>), each with the sites that tried it and
/// the TUs that reach one (`missing_tus`), most TUs first.
fn missing_entries(
    missing: &[(u32, u32, String, bool)],
    missing_tus: &FxMap<(String, bool), u32>,
    name: &dyn Fn(u32) -> String,
) -> Vec<MissingEntry> {
    let mut miss: FxMap<(String, bool), Vec<Site>> = FxMap::default();
    for (from, line, nm, angle) in missing {
        miss.entry((nm.clone(), *angle)).or_default().push(Site {
            file: name(*from),
            line: *line,
        });
    }
    let mut out: Vec<MissingEntry> = miss
        .into_iter()
        .map(|((include, angle), mut sites)| {
            sites.sort();
            sites.dedup();
            let tu_count = missing_tus
                .get(&(include.clone(), angle))
                .copied()
                .unwrap_or(0);
            MissingEntry {
                likely_system: angle,
                include,
                angle,
                tu_count,
                tried_by: sites,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.tu_count
            .cmp(&a.tu_count)
            .then_with(|| a.include.cmp(&b.include))
    });
    out
}

impl Report {
    /// The report of one mode. Without `full`, only the summary numbers, missing includes,
    /// cycles and errors are filled in: no per-file table, hubs or transitive counts (a third
    /// of a rescan's report time, for a table nobody shows).
    pub fn build(
        d: ModeData,
        scan_seconds: f64,
        notes: Vec<String>,
        stats: ScanStats,
        full: bool,
    ) -> Report {
        let g = d.graph;
        let n = g.nodes.len();
        let mut tu_count = vec![0u32; n];
        let mut in_union = vec![false; n];
        let mut total_parsed = 0u64;
        for t in &g.tus {
            total_parsed += t.count_into(&g, &mut in_union, &mut tu_count);
        }
        let (comp, sccs) = tarjan(n, &g.out);
        let name = |i: u32| g.nodes[i as usize].path.clone();
        let by_config = ByConfig::new(&g, &d.configs);
        let files = in_union.iter().filter(|&&b| b).count();
        let total_lines: u64 = (0..n)
            .filter(|&v| in_union[v])
            .map(|v| g.nodes[v].lines as u64)
            .sum();
        let mut headers = if full {
            file_entries(&g, &comp, &sccs, &in_union, &tu_count)
        } else {
            Vec::new()
        };
        by_config.fill(&g, &mut headers);
        headers.sort_by(|a, b| {
            b.contributed
                .cmp(&a.contributed)
                .then_with(|| a.path.cmp(&b.path))
        });
        let by_node = headers
            .iter()
            .enumerate()
            .map(|(i, h)| (h.node, i))
            .collect();
        let hubs = hubs_of(&headers);
        let mut cycles: Vec<Vec<String>> = sccs
            .iter()
            .filter(|c| c.len() > 1 || g.out[c[0] as usize].iter().any(|e| e.0 == c[0]))
            .filter(|c| {
                c.iter()
                    .any(|&m| in_union[m as usize] && g.nodes[m as usize].counted)
            })
            .map(|c| {
                let mut v: Vec<String> = c.iter().map(|&m| name(m)).collect();
                v.sort();
                v
            })
            .collect();
        cycles.sort();
        let missing = missing_entries(&d.missing, &d.missing_tus, &name);
        let mut errors: Vec<ErrorEntry> = d
            .errors
            .iter()
            .map(|(f, l, m)| ErrorEntry {
                file: name(*f),
                line: *l,
                message: m.clone(),
            })
            .collect();
        errors.sort();
        errors.dedup();
        let mut skipped_special = d.skipped;
        skipped_special.sort();
        skipped_special.dedup();
        Report {
            mode: d.mode,
            files,
            translation_units: g.tus.len(),
            total_lines,
            total_parsed,
            blowup: if total_lines > 0 {
                total_parsed as f64 / total_lines as f64
            } else {
                0.0
            },
            scan_seconds,
            headers,
            hubs,
            cycles,
            missing,
            errors,
            skipped_special_count: skipped_special.len(),
            skipped_special,
            notes,
            other_mode: None,
            stats,
            churn: None,
            configs: by_config.summaries,
            cuts: None,
            predicted_frontend_s: None,
            measured_tus: None,
            tu_times: None,
            pch: None,
            graph: g,
            by_node,
        }
    }

    pub fn summary(&self) -> Summary {
        Summary {
            mode: self.mode,
            files: self.files,
            translation_units: self.translation_units,
            total_lines: self.total_lines,
            total_parsed: self.total_parsed,
            blowup: self.blowup,
        }
    }

    /// Finds a node by display path, absolute path or unique path suffix.
    pub fn find(&self, q: &str) -> Option<u32> {
        let nodes = &self.graph.nodes;
        if let Some(i) = nodes
            .iter()
            .position(|n| n.path == q || n.abs.to_string_lossy() == q)
        {
            return Some(i as u32);
        }
        let abs = super::util::absolutize(std::path::Path::new(q));
        if let Some(i) = nodes.iter().position(|n| n.abs == abs) {
            return Some(i as u32);
        }
        let suffix = format!("/{}", q.trim_start_matches("./"));
        let hits: Vec<usize> = (0..nodes.len())
            .filter(|&i| {
                nodes[i].path.ends_with(&suffix)
                    || nodes[i].abs.to_string_lossy().ends_with(&suffix)
            })
            .collect();
        if hits.len() == 1 {
            Some(hits[0] as u32)
        } else {
            None
        }
    }

    /// The table row of a node, if it is a counted file.
    pub fn entry(&self, node: u32) -> Option<&FileEntry> {
        self.by_node.get(&node).map(|&i| &self.headers[i])
    }

    /// Detail view: direct includers (each with how many files reach it) and direct includes (each
    /// with how many files it reaches), sorted by those counts, descending.
    pub fn detail(&self, node: u32) -> Detail {
        let g = &self.graph;
        let count = |v: u32, f: &dyn Fn(&FileEntry) -> u32| self.entry(v).map(f).unwrap_or(0);
        let mut includers: Vec<DetailLink> = g.inc[node as usize]
            .iter()
            .map(|&(v, line)| DetailLink {
                path: g.nodes[v as usize].path.clone(),
                node: v,
                line,
                count: count(v, &|e| e.included_by_count),
            })
            .collect();
        let mut includes: Vec<DetailLink> = g.out[node as usize]
            .iter()
            .map(|&(v, line)| DetailLink {
                path: g.nodes[v as usize].path.clone(),
                node: v,
                line,
                count: count(v, &|e| e.transitive_includes),
            })
            .collect();
        includers.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
        includes.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
        Detail {
            path: g.nodes[node as usize].path.clone(),
            entry: self.entry(node).cloned(),
            includers,
            includes,
        }
    }

    fn tu_edges(&self, t: &TuReach) -> Vec<Vec<(u32, u32)>> {
        match &t.edges {
            Some(e) => {
                let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.graph.nodes.len()];
                for &i in e.iter() {
                    if let Some(&(a, l, b)) = self.graph.edge_tab.get(i as usize) {
                        out[a as usize].push((b, l));
                    }
                }
                out
            }
            None => self.graph.out.clone(),
        }
    }

    /// Shortest include chain to `header` from the TU `from` (or from whichever TU has the
    /// shortest one): TU first, each step with the `#include` line that leads to the next.
    pub fn why_chain(&self, header: &str, from: Option<&str>) -> Result<Vec<ChainStep>, WhyError> {
        let h = self
            .find(header)
            .ok_or_else(|| WhyError::NoFile(header.to_string()))?;
        let cands: Vec<&TuReach> = match from {
            Some(f) => {
                let t = self
                    .find(f)
                    .ok_or_else(|| WhyError::NoFile(f.to_string()))?;
                let tr = self
                    .graph
                    .tus
                    .iter()
                    .find(|x| x.node == t)
                    .ok_or_else(|| WhyError::NotATu(f.to_string()))?;
                vec![tr]
            }
            None => self
                .graph
                .tus
                .iter()
                .filter(|t| t.closure.contains(&h))
                .collect(),
        };
        let mut best: Option<Vec<(u32, u32)>> = None;
        let shared = self
            .graph
            .tus
            .first()
            .map(|t| t.edges.is_none())
            .unwrap_or(false);
        let shared_adj = if shared {
            Some(self.graph.out.clone())
        } else {
            None
        };
        for t in cands {
            if !t.closure.contains(&h) {
                continue;
            }
            let adj_owned;
            let adj = match &shared_adj {
                Some(a) => a,
                None => {
                    adj_owned = self.tu_edges(t);
                    &adj_owned
                }
            };
            if let Some(p) = bfs_path(adj, t.node, h)
                && best.as_ref().is_none_or(|b| p.len() < b.len())
            {
                best = Some(p);
            }
        }
        let best = best.map(|p| {
            p.into_iter()
                .map(|(v, line)| ChainStep {
                    file: self.graph.nodes[v as usize].path.clone(),
                    line,
                })
                .collect()
        });
        best.ok_or_else(|| WhyError::NotReached {
            header: header.to_string(),
            from: from.map(str::to_string),
        })
    }

    /// Evaluates a hypothetical change without rescanning.
    pub fn what_if(&self, w: &WhatIf) -> Result<WhatIfResult, WhatIfError> {
        let g = &self.graph;
        let (cut_from, cut_to, empty) = match w {
            WhatIf::RemoveInclude { from, to } => {
                let a = self
                    .find(from)
                    .ok_or_else(|| WhatIfError::NoFile(from.clone()))?;
                let b = self
                    .find(to)
                    .ok_or_else(|| WhatIfError::NoFile(to.clone()))?;
                if !g.out[a as usize].iter().any(|e| e.0 == b) {
                    return Err(WhatIfError::NotIncluded {
                        from: from.clone(),
                        to: to.clone(),
                    });
                }
                (Some(a), Some(b), None)
            }
            WhatIf::EmptyFile(f) => (
                None,
                None,
                Some(self.find(f).ok_or_else(|| WhatIfError::NoFile(f.clone()))?),
            ),
        };
        let lines = |v: u32| -> u64 {
            if Some(v) == empty {
                0
            } else {
                let n = &g.nodes[v as usize];
                if n.counted || n.is_tu {
                    n.lines as u64
                } else {
                    0
                }
            }
        };
        let mut total = 0u64;
        let mut union = vec![false; g.nodes.len()];
        let mut affected = 0;
        let mut seen = vec![u32::MAX; g.nodes.len()];
        for (ti, t) in g.tus.iter().enumerate() {
            let relevant = match (cut_from, empty) {
                (Some(a), _) => t.closure.contains(&a) && t.closure.contains(&cut_to.unwrap()),
                (_, Some(e)) => t.closure.contains(&e),
                _ => false,
            };
            if !relevant {
                for &f in &t.closure {
                    total += lines(f);
                    union[f as usize] = true;
                }
                continue;
            }
            affected += 1;
            let adj_owned;
            let adj: &Vec<Vec<(u32, u32)>> = match &t.edges {
                Some(_) => {
                    adj_owned = self.tu_edges(t);
                    &adj_owned
                }
                None => &g.out,
            };
            let mut q = VecDeque::from([t.node]);
            seen[t.node as usize] = ti as u32;
            while let Some(v) = q.pop_front() {
                total += lines(v);
                union[v as usize] = true;
                if Some(v) == empty {
                    continue;
                }
                for &(w, _) in &adj[v as usize] {
                    if Some(v) == cut_from && Some(w) == cut_to {
                        continue;
                    }
                    if seen[w as usize] != ti as u32 {
                        seen[w as usize] = ti as u32;
                        q.push_back(w);
                    }
                }
            }
        }
        let files_after = (0..g.nodes.len())
            .filter(|&i| union[i] && (g.nodes[i].counted || g.nodes[i].is_tu))
            .count();
        let total_lines_after = (0..g.nodes.len())
            .filter(|&i| union[i] && (g.nodes[i].counted || g.nodes[i].is_tu))
            .map(|i| lines(i as u32))
            .sum();
        let saved = self.total_parsed.saturating_sub(total);
        Ok(WhatIfResult {
            total_parsed_before: self.total_parsed,
            total_parsed_after: total,
            saved,
            saved_percent: if self.total_parsed > 0 {
                100.0 * saved as f64 / self.total_parsed as f64
            } else {
                0.0
            },
            total_lines_after,
            files_after,
            tus_affected: affected,
            note: if self.mode == Mode::Preprocessed {
                "per-TU include edges reused; macro side effects of the change are not re-evaluated"
                    .into()
            } else {
                "all-branches graph".into()
            },
        })
    }

    /// CSV of the per-file table.
    pub fn to_csv(&self) -> String {
        let mut w = clipforge_base::fsio::csv_writer();
        let _ = w.write_record([
            "path",
            "lines",
            "tu",
            "tu_count",
            "contributed",
            "transitive_includes",
            "transitive_lines",
            "included_by_count",
            "hub_score",
            "direct_includes",
            "direct_includers",
        ]);
        for h in &self.headers {
            // Writing to memory cannot fail, and every record has the header's length.
            let _ = w.write_record([
                h.path.clone(),
                h.lines.to_string(),
                (h.tu as u8).to_string(),
                h.tu_count.to_string(),
                h.contributed.to_string(),
                h.transitive_includes.to_string(),
                h.transitive_lines.to_string(),
                h.included_by_count.to_string(),
                h.hub_score.to_string(),
                h.includes.len().to_string(),
                h.included_by.len().to_string(),
            ]);
        }
        clipforge_base::fsio::csv_text(w)
    }

    /// GraphViz dot of the counted files and the include edges between them.
    pub fn to_dot(&self) -> String {
        let g = &self.graph;
        let mut s =
            String::from("digraph includes {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
        let mut ids = FxMap::default();
        for h in &self.headers {
            let id = ids.len();
            ids.insert(h.node, id);
            s.push_str(&format!(
                "  n{id} [label=\"{}\\n{} lines, {} TUs\"{}];\n",
                dot_escape(&h.path),
                h.lines,
                h.tu_count,
                if h.tu {
                    ", style=filled, fillcolor=lightgrey"
                } else {
                    ""
                }
            ));
        }
        for h in &self.headers {
            for &(w, line) in &g.out[h.node as usize] {
                if let Some(b) = ids.get(&w) {
                    s.push_str(&format!(
                        "  n{} -> n{} [label=\"{}\"];\n",
                        ids[&h.node], b, line
                    ));
                }
            }
        }
        s.push_str("}\n");
        s
    }

    /// Per-TU closures as JSON: `{ "TU absolute path": ["absolute path", ...] }`, counted files
    /// only (all files with `count_system`). For comparisons with `g++ -M`.
    pub fn closures_json(&self) -> String {
        let g = &self.graph;
        let mut m = serde_json::Map::new();
        for t in &g.tus {
            let mut v: Vec<String> = t
                .closure
                .iter()
                .filter(|&&f| g.nodes[f as usize].counted || f == t.node)
                .map(|&f| g.nodes[f as usize].abs.to_string_lossy().into_owned())
                .collect();
            v.sort();
            m.insert(
                g.nodes[t.node as usize].abs.to_string_lossy().into_owned(),
                v.into(),
            );
        }
        serde_json::to_string(&m).unwrap_or_default()
    }

    /// The JSON report (stable keys; see the module docs of `headers`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn bfs_path(adj: &[Vec<(u32, u32)>], from: u32, to: u32) -> Option<Vec<(u32, u32)>> {
    let n = adj.len();
    let mut prev: Vec<(u32, u32)> = vec![(u32::MAX, 0); n];
    let mut q = VecDeque::from([from]);
    prev[from as usize] = (from, 0);
    while let Some(v) = q.pop_front() {
        if v == to {
            break;
        }
        for &(w, line) in &adj[v as usize] {
            if prev[w as usize].0 == u32::MAX {
                prev[w as usize] = (v, line);
                q.push_back(w);
            }
        }
    }
    if prev[to as usize].0 == u32::MAX {
        return None;
    }
    // Walk back: each step records the line in the includer.
    let mut rev = vec![(to, 0u32)];
    let mut cur = to;
    while cur != from {
        let (p, line) = prev[cur as usize];
        rev.push((p, line));
        cur = p;
    }
    rev.reverse();
    Some(rev)
}

/// Detail-view data for one file.
#[derive(Clone, Debug, Serialize)]
pub struct Detail {
    pub path: String,
    pub entry: Option<FileEntry>,
    /// Direct includers, each with the number of files that reach it.
    pub includers: Vec<DetailLink>,
    /// Direct includes, each with the number of files it reaches.
    pub includes: Vec<DetailLink>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DetailLink {
    pub path: String,
    pub node: u32,
    pub line: u32,
    pub count: u32,
}
